import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, copyFile, link, lstat, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createGzip, gunzipSync } from 'node:zlib';
import { newId } from '../ids.js';

/**
 * Backups of the embedded default: the PGlite database (DATA_DIR/pglite) and every other file of DATA_DIR (uploaded
 * objects under objects/, the generated jwt-secret...), taken as one consistent copy while the server runs.
 *
 * PGlite is one connection inside the server process, so no second process may open its folder while it runs. The
 * server therefore answers backups itself, on a Unix socket in DATA_DIR (`backup.sock`, mode 600: only the owner of
 * the data may ask). With the database's lock held (no transaction in progress, none starting), it dumps the data
 * directory (`dumpDataDir`, uncompressed: about a second) and hard-links every other file into a staging folder in
 * DATA_DIR (same file system: a link per file, no copy); then it releases the lock and writes the backup from the dump
 * and the links. Files are immutable once complete (uploads are written to `<id>.partial` and renamed, and partial
 * files are left out), so a linked file keeps the content it had at the dump even if it is deleted afterwards; an
 * object completed after the dump may be in the copy without its row (an orphan file, harmless), never the reverse.
 * When no server answers on the socket, `npm run backup` opens the folder itself and does the same.
 *
 * A backup is a folder: `pglite.tar.gz` (the dump), `files/` (the other files, modes kept) and `manifest.json` (format,
 * time, and each file's size and SHA-256, checked by restore).
 */

export const BACKUP_SOCKET = 'backup.sock';
const STAGING_PREFIX = '.backup-staging-';
const FORMAT = 'delivery-embedded-backup/1';

export interface BackupManifest {
  format: typeof FORMAT;
  created_at: string;
  database: { file: string; bytes: number; sha256: string };
  files: { path: string; bytes: number; mode: number; sha256: string }[];
}

/** What a backup needs of the running database: a dump taken, and `whileLocked` run, with no transaction in progress. */
export type Snapshotter = <T>(whileLocked: (dump: Blob) => Promise<T>) => Promise<T>;

/** Files of DATA_DIR that belong in a backup: everything but the database folder, the socket, staging and partial uploads. */
async function dataFiles(dataDir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(path.join(dataDir, rel), { withFileTypes: true })) {
    const r = path.join(rel, e.name);
    if (!rel && (e.name === 'pglite' || e.name === BACKUP_SOCKET || e.name.startsWith(STAGING_PREFIX))) continue;
    if (e.isDirectory()) out.push(...(await dataFiles(dataDir, r)));
    else if (e.isFile() && !e.name.endsWith('.partial')) out.push(r);
  }
  return out;
}

async function sha256Of(file: string): Promise<string> {
  const h = createHash('sha256');
  await pipeline(createReadStream(file), h);
  return h.digest('hex');
}

async function isEmptyDir(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).length === 0;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw err;
  }
}

/** Takes a backup of DATA_DIR into `target` (a new or empty folder). Returns its manifest. */
export async function writeBackup(dataDir: string, target: string, snapshot: Snapshotter): Promise<BackupManifest> {
  if (!(await isEmptyDir(target))) throw new Error(`backup: ${target} is not empty; give a new or empty folder`);
  await mkdir(path.join(target, 'files'), { recursive: true, mode: 0o700 });
  const staging = path.join(dataDir, `${STAGING_PREFIX}${newId()}`);
  try {
    const { dump, files } = await snapshot(async (d) => {
      const names = await dataFiles(dataDir);
      for (const f of names) {
        await mkdir(path.dirname(path.join(staging, f)), { recursive: true, mode: 0o700 });
        await link(path.join(dataDir, f), path.join(staging, f));
      }
      return { dump: d, files: names };
    });
    const dbFile = path.join(target, 'pglite.tar.gz');
    await pipeline(Readable.fromWeb(dump.stream() as any), createGzip(), createWriteStream(dbFile, { mode: 0o600 }));
    const manifest: BackupManifest = {
      format: FORMAT,
      created_at: new Date().toISOString(),
      database: { file: 'pglite.tar.gz', bytes: (await stat(dbFile)).size, sha256: await sha256Of(dbFile) },
      files: [],
    };
    for (const f of files) {
      const to = path.join(target, 'files', f);
      await mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
      await copyFile(path.join(staging, f), to);
      const st = await stat(to);
      const mode = (await stat(path.join(staging, f))).mode & 0o777;
      await chmod(to, mode);
      manifest.files.push({ path: f.split(path.sep).join('/'), bytes: st.size, mode, sha256: await sha256Of(to) });
    }
    await writeFile(path.join(target, 'manifest.json'), JSON.stringify(manifest, null, 2), { mode: 0o600 });
    return manifest;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** The PGlite dump and the files of a backup, checked against its manifest; throws `restore: ...` on any mismatch. */
export async function readBackup(source: string): Promise<{ manifest: BackupManifest; dump: Blob }> {
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(await readFile(path.join(source, 'manifest.json'), 'utf8'));
  } catch {
    throw new Error(`restore: ${source} is not a backup (no readable manifest.json)`);
  }
  if (manifest.format !== FORMAT)
    throw new Error(`restore: ${source} has the format ${JSON.stringify(manifest.format)}, expected ${FORMAT}`);
  const dbFile = path.join(source, manifest.database.file);
  if ((await sha256Of(dbFile).catch(() => null)) !== manifest.database.sha256)
    throw new Error(`restore: ${dbFile} is missing or damaged (checksum)`);
  for (const f of manifest.files) {
    if (f.path.split('/').some((p) => p === '..' || p === '') || path.isAbsolute(f.path))
      throw new Error(`restore: the manifest names a file outside the backup: ${f.path}`);
    if ((await sha256Of(path.join(source, 'files', f.path)).catch(() => null)) !== f.sha256)
      throw new Error(`restore: files/${f.path} is missing or damaged (checksum)`);
  }
  return { manifest, dump: new Blob([new Uint8Array(gunzipSync(await readFile(dbFile)))]) };
}

/** Copies the files of a checked backup into DATA_DIR with their modes (the database is loaded by the caller). */
export async function restoreFiles(source: string, manifest: BackupManifest, dataDir: string): Promise<void> {
  for (const f of manifest.files) {
    const to = path.join(dataDir, ...f.path.split('/'));
    await mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
    await copyFile(path.join(source, 'files', ...f.path.split('/')), to);
    await chmod(to, f.mode);
  }
}

/** Whether DATA_DIR holds anything (a restore refuses such a folder unless forced). */
export async function holdsData(dataDir: string): Promise<boolean> {
  return !(await isEmptyDir(dataDir));
}

/**
 * The server side: answers `POST /backup` with `{"target": "<folder>"}` on DATA_DIR/backup.sock (mode 600) with the
 * manifest, or a problem `{"error"}`. Returns a function that closes the socket.
 */
export async function serveBackups(
  dataDir: string,
  snapshot: Snapshotter,
  log: { info(o: object, m: string): void },
): Promise<() => Promise<void>> {
  const socket = path.join(dataDir, BACKUP_SOCKET);
  // A socket left by a server that died: nothing listens on it any more (this server holds the database's folder).
  await rm(socket, { force: true });
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', async () => {
      const answer = (status: number, o: object) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(o));
      if (req.method !== 'POST' || req.url !== '/backup') return answer(404, { error: 'POST /backup only' });
      let target: unknown;
      try {
        target = JSON.parse(body).target;
      } catch {
        /* answered below */
      }
      if (typeof target !== 'string' || !path.isAbsolute(target))
        return answer(400, { error: 'backup: the target must be an absolute folder path' });
      try {
        const manifest = await writeBackup(dataDir, target, snapshot);
        log.info({ target, files: manifest.files.length }, 'backup written');
        answer(200, manifest);
      } catch (err) {
        answer(409, { error: (err as Error).message });
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, resolve);
  });
  await chmod(socket, 0o600);
  return () =>
    new Promise<void>((resolve) =>
      server.close(() =>
        rm(socket, { force: true }).then(
          () => resolve(),
          () => resolve(),
        ),
      ),
    );
}

/** Asks the server running on DATA_DIR for a backup; null when none answers (no socket, or a stale one). */
export async function requestBackup(dataDir: string, target: string): Promise<BackupManifest | null> {
  const socketPath = path.join(dataDir, BACKUP_SOCKET);
  if (!(await lstat(socketPath).catch(() => null))) return null;
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method: 'POST', path: '/backup', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        let o: any;
        try {
          o = JSON.parse(text);
        } catch {
          return reject(new Error(`backup: the server answered ${res.statusCode} without JSON`));
        }
        if (res.statusCode === 200) resolve(o as BackupManifest);
        else reject(new Error(o.error ?? `backup: the server answered ${res.statusCode}`));
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNREFUSED' || err.code === 'ENOENT') resolve(null);
      else reject(err);
    });
    req.end(JSON.stringify({ target }));
  });
}

/** Whether a server answers on this socket (DATA_DIR/backup.sock): the embedded database is then open in that process. */
export function serverAnswers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect(socketPath, () => {
      c.end();
      resolve(true);
    });
    c.on('error', () => resolve(false));
  });
}
