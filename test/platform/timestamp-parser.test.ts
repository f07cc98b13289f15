import { describe, expect, it } from 'vitest';
import { parseTimestamptz, parseTimestamptzGeneral } from '../../src/platform/db/types.js';
import { freshDatabase } from '../helpers.js';

const same = (s: string) => {
  const a = parseTimestamptzGeneral(s);
  const b = parseTimestamptz(s);
  return [s, a instanceof Date ? a.getTime() : a, b instanceof Date ? b.getTime() : b];
};

describe('timestamptz parser', () => {
  it('gives the same Date as node-postgres on every shape, fast path or not', () => {
    const samples = [
      '2026-11-25 03:16:19+00',
      '2026-11-25 03:16:19.6+00',
      '2026-11-25 03:16:19.614+00',
      '2026-11-25 03:16:19.614123+00',
      '2026-11-25 03:16:19.999999+00',
      '2024-02-29 23:59:59.000001+00',
      '1970-01-01 00:00:00+00',
      '0999-12-31 23:59:59+00',
      '0001-01-01 00:00:00+00 BC',
      '2026-11-25 03:16:19.614123+05:30',
      '2026-11-25 03:16:19-04',
      'infinity',
      '-infinity',
      '2026-1x-25 03:16:19+00',
    ];
    for (let i = 0; i < 20_000; i++) {
      const iso = new Date(Date.UTC(1900, 0, 1) + Math.floor(Math.random() * 200 * 365 * 86_400_000)).toISOString();
      const micros = String(Math.floor(Math.random() * 1_000_000))
        .padStart(6, '0')
        .slice(0, 1 + (i % 6));
      samples.push(`${iso.slice(0, 10)} ${iso.slice(11, 19)}${i % 7 ? `.${micros}` : ''}+00`);
    }
    for (const s of samples) {
      const [, a, b] = same(s);
      if (a !== b) expect(same(s)).toEqual([s, a, a]);
    }
  });

  it('values read from the database serialize exactly as before', async () => {
    const { db, url, drop } = await freshDatabase();
    try {
      if (!url) return; // PGlite parses with its own parsers
      const text = ['2026-11-25 03:16:19.614123+00', '2026-01-01 00:00:00+00', '1999-12-31 23:59:59.9999+00'];
      const rows = await db.withOwner(
        async (tx) =>
          (
            await tx.query<{ t: Date; s: string }>(`SELECT x::timestamptz AS t, x::timestamptz::text AS s FROM unnest($1::text[]) x`, [
              text,
            ])
          ).rows,
      );
      for (const r of rows) expect(JSON.stringify(r.t)).toBe(JSON.stringify(parseTimestamptzGeneral(r.s)));
    } finally {
      await db.close();
      await drop();
    }
  });
});
