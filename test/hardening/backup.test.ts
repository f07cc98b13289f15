import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { png } from '../storage/fixtures.js';
import { api, login, startServer, stopServer, type ServerProcess } from './server-process.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** `npm run backup` / `npm run restore` (src/platform/db/backup-cli.ts) with DATA_DIR, as an operator runs them. */
function cli(args: string[], dataDir: string) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(JWT_SECRET|DATABASE_|DATA_DIR)/.test(k)));
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/platform/db/backup-cli.ts', ...args], {
    cwd: ROOT,
    env: { ...env, DATA_DIR: dataDir },
    encoding: 'utf8',
    timeout: 120_000,
  });
}

/** The embedded default: no DATABASE_URL, and no JWT_SECRET (the server generates one and keeps it in DATA_DIR). */
const embedded = (dataDir: string) => startServer({ databaseUrl: '', env: { DATA_DIR: dataDir, JWT_SECRET: '' }, timeoutMs: 120_000 });

describe('backup and restore of the embedded database', () => {
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];
  const tmp = async (name: string) => {
    const d = await mkdtemp(path.join(os.tmpdir(), `${name}-`));
    dirs.push(d);
    return d;
  };
  afterAll(async () => {
    for (const s of servers) await stopServer(s);
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('a copy taken while the server runs restores into a fresh folder with the same records, file and secret', async () => {
    const data = await tmp('backup-data');
    const first = await embedded(data);
    servers.push(first);
    const token = await login(first.baseUrl, 'admin@demo.test');
    const point = { type: 'Point', coordinates: [-68.13, -16.5] };
    const trip = await api(first.baseUrl, token, 'POST', '/trips', {
      pickup_location: point,
      pickup_address: 'Backup street 1',
      dropoff_location: point,
      dropoff_address: 'Backup street 2',
    });
    expect(trip.status, JSON.stringify(trip.body)).toBe(201);
    const bytes = png(3);
    const slot = await api(first.baseUrl, token, 'POST', '/storage/generic/uploads', {
      purpose: 'other',
      mime_type: 'image/png',
      size_bytes: bytes.length,
      filename: 'b.png',
    });
    expect(slot.status, JSON.stringify(slot.body)).toBe(201);
    const put = await fetch(`${first.baseUrl}/api/v1/storage/uploads/${slot.body.upload_id}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'image/png', 'x-upload-token': slot.body.upload_token },
      body: new Uint8Array(bytes),
    });
    expect(put.status).toBe(201);
    const objectId = (await put.json()).id as string;
    expect((await stat(path.join(data, 'backup.sock'))).mode & 0o777).toBe(0o600);

    // Backed up while it runs (through its socket), and it keeps serving.
    const backupDir = path.join(await tmp('backup-out'), 'copy');
    const b = cli(['backup', backupDir], data);
    expect(b.stderr).toBe('');
    expect(b.status).toBe(0);
    expect(b.stdout).toMatch(/from the running server/);
    expect((await api(first.baseUrl, token, 'GET', `/trips/${trip.body.id}`)).status).toBe(200);
    const manifest = JSON.parse(await readFile(path.join(backupDir, 'manifest.json'), 'utf8'));
    expect(manifest.files.map((f: { path: string }) => f.path)).toEqual(
      expect.arrayContaining(['jwt-secret', expect.stringMatching(/^objects\//)]),
    );
    expect(manifest.files.find((f: { path: string }) => f.path === 'jwt-secret').mode).toBe(0o600);
    // A change after the backup is not in it.
    const later = await api(first.baseUrl, token, 'POST', '/trips', {
      pickup_location: point,
      pickup_address: 'After 1',
      dropoff_location: point,
      dropoff_address: 'After 2',
    });
    expect(later.status).toBe(201);

    // Restored into a fresh folder, a server on it reads the same records and file; the token of the first still
    // verifies (the generated secret came back with the data).
    const fresh = path.join(await tmp('backup-restore'), 'data');
    const r = cli(['restore', backupDir], fresh);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    await stopServer(first);
    const second = await embedded(fresh);
    servers.push(second);
    const got = await api(second.baseUrl, token, 'GET', `/trips/${trip.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: trip.body.id, pickup_address: 'Backup street 1' });
    expect((await api(second.baseUrl, token, 'GET', `/trips/${later.body.id}`)).status).toBe(404);
    const file = await fetch(`${second.baseUrl}/api/v1/storage/objects/${objectId}`, { headers: { authorization: `Bearer ${token}` } });
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer()).equals(bytes)).toBe(true);

    // Refused while a server runs on the folder, even forced; refused into a folder that holds data unless forced.
    const running = cli(['restore', backupDir, '--force'], fresh);
    expect(running.status).toBe(1);
    expect(running.stderr.trim()).toBe(`restore: a server is running on ${fresh}; stop it first`);
    await stopServer(second);
    const occupied = await tmp('backup-occupied');
    await writeFile(path.join(occupied, 'keep.txt'), 'mine');
    const refused = cli(['restore', backupDir], occupied);
    expect(refused.status).toBe(1);
    expect(refused.stderr.trim()).toBe(
      `restore: ${occupied} (DATA_DIR) holds data; restore into an empty folder, or pass --force to replace it`,
    );
    expect(await readdir(occupied)).toEqual(['keep.txt']);
    const forced = cli(['restore', backupDir, '--force'], occupied);
    expect(forced.status, forced.stderr).toBe(0);
    expect((await readdir(occupied)).sort()).toEqual(['jwt-secret', 'objects', 'pglite']);

    // With no server running, backup opens the folder itself.
    const offline = cli(['backup', path.join(await tmp('backup-offline'), 'copy')], occupied);
    expect(offline.stderr).toBe('');
    expect(offline.stdout).toMatch(/no server running/);
  }, 600_000);

  it('bad input: a damaged backup, a backup into a folder that holds files, PostgreSQL settings: one line, exit 1', async () => {
    const data = await tmp('backup-bad');
    const notBackup = await tmp('backup-not');
    const r = cli(['restore', notBackup], path.join(data, 'x'));
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toBe(`restore: ${notBackup} is not a backup (no readable manifest.json)`);
    await writeFile(
      path.join(notBackup, 'manifest.json'),
      JSON.stringify({ format: 'delivery-embedded-backup/1', database: { file: 'pglite.tar.gz', sha256: 'x' }, files: [] }),
    );
    const damaged = cli(['restore', notBackup], path.join(data, 'x'));
    expect(damaged.stderr.trim()).toBe(`restore: ${path.join(notBackup, 'pglite.tar.gz')} is missing or damaged (checksum)`);
    await expect(stat(path.join(data, 'x'))).rejects.toThrow();
    const full = cli(['backup', notBackup], data);
    expect(full.status).toBe(1);
    expect(full.stderr.trim()).toBe(`backup: no embedded database in ${path.join(data, 'pglite')} (DATA_DIR)`);
    const pg = spawnSync(process.execPath, ['--import', 'tsx', 'src/platform/db/backup-cli.ts', 'backup', notBackup], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: 'postgres://x@127.0.0.1:1/x', DATA_DIR: data },
      encoding: 'utf8',
    });
    expect(pg.status).toBe(1);
    expect(pg.stderr.trim()).toMatch(/^backup: DATABASE_URL is set; on PostgreSQL use pg_dump/);
    const usage = cli(['backup'], data);
    expect(usage.stderr.trim()).toBe('usage: npm run backup -- <folder> | npm run restore -- <folder> [--force]');
  }, 120_000);
});
