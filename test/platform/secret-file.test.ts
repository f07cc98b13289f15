import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadOrCreateSecret, SECRET_FILE } from '../../src/platform/secret-file.js';
import { deriveKeys } from '../../src/platform/keys.js';
import { loadConfig } from '../../src/config.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('the stored secret of the embedded default', () => {
  it('is created once, atomically, even by processes starting together, and read back unchanged', async () => {
    const dir = path.join(await mkdtemp(path.join(os.tmpdir(), 'secret-file-')), 'data');
    dirs.push(path.dirname(dir));
    const all = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateSecret(dir)));
    expect(new Set(all).size).toBe(1);
    expect(all[0]).toMatch(/^[0-9a-f]{64}$/);
    const file = path.join(dir, SECRET_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, 'utf8')).trim()).toBe(all[0]);
    expect(await loadOrCreateSecret(dir)).toBe(all[0]);
  });

  it('derives a different key per purpose, and the same keys from the same secret', () => {
    const a = deriveKeys('s'.repeat(40));
    const b = deriveKeys('s'.repeat(40));
    const keys = [a.accessToken, a.streamToken, a.recipientLink, a.refreshSuccessor].map((k) => Buffer.from(k).toString('hex'));
    expect(new Set(keys).size).toBe(keys.length);
    expect(Buffer.from(b.accessToken).equals(Buffer.from(a.accessToken))).toBe(true);
    expect(Buffer.from(deriveKeys('t'.repeat(40)).accessToken).equals(Buffer.from(a.accessToken))).toBe(false);
    // Without JWT_SECRET the config says so (the server then reads the stored one); with it, its keys.
    expect(loadConfig({}).jwtSecretGiven).toBe(false);
    const given = loadConfig({ JWT_SECRET: 's'.repeat(40) });
    expect(given.jwtSecretGiven).toBe(true);
    expect(Buffer.from(given.keys.accessToken).equals(Buffer.from(a.accessToken))).toBe(true);
  });
});
