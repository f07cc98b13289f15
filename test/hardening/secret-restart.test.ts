import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SECRET_FILE } from '../../src/platform/secret-file.js';
import { pt } from '../support.js';
import { api, login, startServer, stopServer, type ServerProcess } from './server-process.js';

/**
 * The embedded default (PGlite, no JWT_SECRET) keeps the secret it generated in DATA_DIR: the real server is
 * started, stopped and started again on the same DATA_DIR, and the access token and the recipient link issued
 * before the restart still work. (With DATABASE_URL, JWT_SECRET is required, so this is the embedded default's
 * test on either suite.)
 */
const embedded = { databaseUrl: '', env: { JWT_SECRET: '', DATABASE_URL: '', SEED_DEMO: 'true' }, timeoutMs: 120_000 };

describe('secrets that survive a restart (embedded default without JWT_SECRET)', () => {
  const dirs: string[] = [];
  let server: ServerProcess | null = null;
  const tmp = async () => {
    const d = await mkdtemp(path.join(os.tmpdir(), 'secret-restart-'));
    dirs.push(d);
    return d;
  };
  afterAll(async () => {
    if (server) await stopServer(server, 'SIGKILL');
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('keeps sessions and recipient links across a restart on the same DATA_DIR', async () => {
    const dataDir = await tmp();
    server = await startServer({ ...embedded, env: { ...embedded.env, DATA_DIR: dataDir } });
    const file = path.join(dataDir, SECRET_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    const token = await login(server.baseUrl, 'admin@demo.test');
    const trip = await api(server.baseUrl, token, 'POST', '/trips', {
      pickup_location: pt(-68.13, -16.5),
      pickup_address: 'Pickup street 1',
      dropoff_location: pt(-68.12, -16.49),
      dropoff_address: 'Dropoff street 2',
      recipient_phone: '+59170000001',
    });
    expect(trip.status, JSON.stringify(trip.body)).toBe(201);
    const link = await api(server.baseUrl, token, 'GET', `/trips/${trip.body.id}/recipient-link`);
    expect(link.status).toBe(200);
    const linkPath = (link.body.url as string).replace(/^https?:\/\/[^/]+/, '').replace(/^\/api\/v1/, '');
    expect((await api(server.baseUrl, null, 'GET', linkPath)).status).toBe(200);
    const fileBefore = (await stat(file)).mtimeMs;

    await stopServer(server);
    server = await startServer({ ...embedded, env: { ...embedded.env, DATA_DIR: dataDir } });
    expect((await stat(file)).mtimeMs).toBe(fileBefore);

    const me = await api(server.baseUrl, token, 'GET', '/me');
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    const again = await api(server.baseUrl, null, 'GET', linkPath);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.trip_id).toBe(trip.body.id);
    await stopServer(server);
    server = null;
  }, 300_000);

  it('refuses to start, with one clear line, on a stored secret that is too short, unreadable or readable by others', async () => {
    const cases: [string, (file: string) => Promise<void>, RegExp][] = [
      ['short', (f) => writeFile(f, 'too-short\n', { mode: 0o600 }), /secret file .* holds 9 characters, at least 32/],
      ['unreadable', (f) => mkdir(f), /cannot read the secret file .*EISDIR/],
      [
        'open to others',
        (f) => writeFile(f, `${'a'.repeat(64)}\n`, { mode: 0o644 }),
        /secret file .* is readable by others \(mode 644\); chmod 600/,
      ],
    ];
    for (const [name, make, message] of cases) {
      const dataDir = await tmp();
      await make(path.join(dataDir, SECRET_FILE));
      const start = startServer({ ...embedded, env: { ...embedded.env, DATA_DIR: dataDir }, timeoutMs: 60_000 });
      await expect(start, name).rejects.toThrow(message);
    }
  }, 200_000);
});
