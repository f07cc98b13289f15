import { once } from 'node:events';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { rows } from '../commerce/fixtures.js';
import { newSubadmin, newTerritory } from '../subadmin/fixtures.js';
import { newId } from '../../src/platform/ids.js';

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const HEADER = 'external_ref,pickup_address,pickup_lat,pickup_lon,dropoff_address,dropoff_lat,dropoff_lon,recipient_name';

let t: TestApp;
let admin: Session;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
});
afterAll(() => t?.close());

const uniq = () => newId().slice(-10);
const count = async (sql: string, params: unknown[] = []) => Number((await rows<{ n: number }>(t, sql, params))[0].n);
const importJobs = () => count('SELECT count(*)::int AS n FROM import_job WHERE organization_id = $1', [t.demo.organizationId]);
const tripsByRef = (refs: string[]) =>
  rows<{ external_ref: string; source_channel: string; created_by: string | null }>(
    t,
    'SELECT r.external_ref, t.source_channel, t.created_by_user_id AS created_by FROM import_ref r JOIN trip t ON t.organization_id = r.organization_id AND t.id = r.entity_id WHERE r.external_ref = ANY($1::text[]) ORDER BY r.external_ref',
    [refs],
  );
/** A row picked up in a quiet area of its own (the sub-administrator's territory below) or in Santa Cruz (outside it). */
const line = (ref: string, where: 'zone' | 'santa_cruz' = 'zone') =>
  where === 'zone'
    ? `${ref},Camino al Lago km 3,-15.5000,-67.0000,Camino al Lago km 5,-15.5020,-67.0020,Ana`
    : `${ref},Av. Monseñor Rivero 200,-17.7800,-63.1800,Calle Libertad 10,-17.7830,-63.1820,Luis`;
const csv = (...lines: string[]) => [HEADER, ...lines].join('\r\n') + '\r\n';

/** A zip file written by hand, so a part's declared size can be the truth or a lie. */
function zip(parts: { name: string; data: Buffer; crc: number; size: number; method: 0 | 8 }[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const p of parts) {
    const name = Buffer.from(p.name);
    const head = Buffer.alloc(30);
    head.writeUInt32LE(0x04034b50, 0);
    head.writeUInt16LE(20, 4);
    head.writeUInt16LE(p.method, 8);
    head.writeUInt16LE(0x21, 12);
    head.writeUInt32LE(p.crc, 14);
    head.writeUInt32LE(p.data.length, 18);
    head.writeUInt32LE(p.size, 22);
    head.writeUInt16LE(name.length, 26);
    const dir = Buffer.alloc(46);
    dir.writeUInt32LE(0x02014b50, 0);
    dir.writeUInt16LE(20, 4);
    dir.writeUInt16LE(20, 6);
    dir.writeUInt16LE(p.method, 10);
    dir.writeUInt16LE(0x21, 14);
    dir.writeUInt32LE(p.crc, 16);
    dir.writeUInt32LE(p.data.length, 20);
    dir.writeUInt32LE(p.size, 24);
    dir.writeUInt16LE(name.length, 28);
    dir.writeUInt32LE(offset, 42);
    locals.push(head, name, p.data);
    central.push(dir, name);
    offset += head.length + name.length + p.data.length;
  }
  const dir = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}

/** Deflates the chunks as a stream (the whole expansion is never in memory). */
async function deflate(chunks: Iterable<Buffer>) {
  const z = zlib.createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  z.on('data', (c: Buffer) => out.push(c));
  const ended = once(z, 'end');
  let crc = 0;
  let size = 0;
  for (const c of chunks) {
    crc = zlib.crc32(c, crc);
    size += c.length;
    if (!z.write(c)) await once(z, 'drain');
  }
  z.end();
  await ended;
  return { data: Buffer.concat(out), crc, size };
}

const stored = (name: string, text: string) => {
  const data = Buffer.from(text);
  return { name, data, crc: zlib.crc32(data), size: data.length, method: 0 as const };
};

/** An .xlsx whose first sheet is 300 MiB of rows once inflated; `lie` declares it as 2 KiB instead. */
async function bomb(lie: boolean): Promise<Buffer> {
  const row = Buffer.from('<row><c t="inlineStr"><is><t>AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA</t></is></c></row>');
  const chunk = Buffer.alloc(1024 * 1024, row.toString());
  function* sheet() {
    yield Buffer.from(
      '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>',
    );
    for (let i = 0; i < 300; i++) yield chunk;
    yield Buffer.from('</sheetData></worksheet>');
  }
  const s = await deflate(sheet());
  return zip([
    stored(
      '[Content_Types].xml',
      '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>',
    ),
    stored(
      'xl/workbook.xml',
      '<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="data" sheetId="1" r:id="rId1"/></sheets></workbook>',
    ),
    { name: 'xl/worksheets/sheet1.xml', data: s.data, crc: s.crc, size: lie ? 2048 : s.size, method: 8 },
  ]);
}

describe('XLSX unzipped size', () => {
  it('a zip bomb (a small .xlsx whose sheet expands to 300 MiB) is refused with 413 before it is inflated, declared honestly or not; nothing is written', async () => {
    const before = await importJobs();
    for (const lie of [false, true]) {
      const file = await bomb(lie);
      expect(file.length).toBeLessThan(2 * 1024 * 1024);
      const res = await t.req(admin, {
        method: 'POST',
        url: '/imports/trips?dry_run=false',
        payload: file,
        headers: { 'content-type': XLSX },
      });
      expect(res.statusCode, `lie=${lie} ${res.body}`).toBe(413);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json().code).toBe('IMPORT_UNZIPPED_TOO_LARGE');
    }
    expect(await importJobs()).toBe(before);
  });
});

describe('imports by other callers', () => {
  it('an API key with trips:write imports trips (source api, as its owner); a key without it is 403 and writes nothing', async () => {
    const key = async (scopes: string[]) => {
      const res = await t.req(admin, { method: 'POST', url: '/api-keys', payload: { name: 'importer', scopes } });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().key as string;
    };
    const upload = (k: string, body: string, query: string) =>
      t.app.inject({
        method: 'POST',
        url: `/api/v1/imports/trips?${query}`,
        payload: body,
        headers: { authorization: `Bearer ${k}`, 'content-type': 'text/csv' },
      });
    const refs = [`KEY-${uniq()}`, `KEY-${uniq()}`];
    const file = csv(line(refs[0]), line(refs[1]));
    const before = await importJobs();
    const readOnly = await upload(await key(['trips:read']), file, 'dry_run=false');
    expect(readOnly.statusCode).toBe(403);
    expect(readOnly.headers['content-type']).toContain('application/problem+json');
    expect(readOnly.json().code).toBe('API_KEY_SCOPE');
    expect(await importJobs()).toBe(before);

    const writer = await key(['trips:write']);
    const dry = await upload(writer, file, 'dry_run=true');
    expect(dry.statusCode, dry.body).toBe(201);
    expect(dry.json()).toMatchObject({ dry_run: true, valid_rows: 2, error_rows: 0 });
    expect(await tripsByRef(refs)).toEqual([]);
    const done = await upload(writer, file, 'dry_run=false');
    expect(done.statusCode, done.body).toBe(201);
    expect(done.json()).toMatchObject({ dry_run: false, status: 'completed', created_rows: 2, error_rows: 0 });
    const made = await tripsByRef(refs);
    expect(made.map((r) => r.external_ref)).toEqual([...refs].sort());
    expect(made.every((r) => r.source_channel === 'api' && r.created_by === admin.userId)).toBe(true);
    // the same file again: every row a duplicate, nothing created twice
    const again = await upload(writer, file, 'dry_run=false');
    expect(again.json()).toMatchObject({ created_rows: 0, duplicate_rows: 2 });
    expect(await tripsByRef(refs)).toHaveLength(2);
  });

  it("a sub-administrator's rows outside his territories are rejected by row (OUTSIDE_TERRITORY), those inside are created", async () => {
    const territory = await newTerritory(t, admin, `Import zone ${uniq()}`, -67, -15.5, 0.05);
    const sub = await newSubadmin(t, admin, { territory_ids: [territory] });
    const [inside, outside, inside2] = [`IN-${uniq()}`, `OUT-${uniq()}`, `IN-${uniq()}`];
    const file = csv(line(inside), line(outside, 'santa_cruz'), line(inside2));
    const upload = (query: string) =>
      t.req(sub.session, { method: 'POST', url: `/imports/trips?${query}`, payload: file, headers: { 'content-type': 'text/csv' } });

    const dry = await upload('dry_run=true');
    expect(dry.statusCode, dry.body).toBe(201);
    expect(dry.json()).toMatchObject({ valid_rows: 2, error_rows: 1 });
    expect(dry.json().errors).toEqual([expect.objectContaining({ row: 3, code: 'OUTSIDE_TERRITORY' })]);
    // all or nothing (the default): refused whole, nothing written
    const whole = await upload('dry_run=false');
    expect(whole.statusCode).toBe(422);
    expect(whole.json().code).toBe('IMPORT_INVALID_ROWS');
    expect(await tripsByRef([inside, outside, inside2])).toEqual([]);

    const valid = await upload('dry_run=false&mode=valid_only');
    expect(valid.statusCode, valid.body).toBe(201);
    expect(valid.json()).toMatchObject({ created_rows: 2, error_rows: 1 });
    const made = await tripsByRef([inside, outside, inside2]);
    expect(made.map((r) => r.external_ref).sort()).toEqual([inside, inside2].sort());
    expect(made.every((r) => r.created_by === sub.userId)).toBe(true);
    // his list shows his import; the report names the refused row
    const list = (await t.req(sub.session, { method: 'GET', url: '/imports' })).json().data as { id: string }[];
    expect(list.map((i) => i.id)).toContain(valid.json().id);
    const report = await t.req(sub.session, { method: 'GET', url: `/imports/${valid.json().id}/report` });
    expect(report.statusCode).toBe(200);
    expect(report.body).toMatch(new RegExp(`3,${outside},error,[a-z_]*,OUTSIDE_TERRITORY`));
  });
});
