import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { MIN_SECRET_LENGTH } from './keys.js';

/** The file, in DATA_DIR, that keeps the generated secret of an installation without JWT_SECRET. */
export const SECRET_FILE = 'jwt-secret';

const codeOf = (err: unknown) => (err as NodeJS.ErrnoException).code;

/**
 * The embedded default's secret: read from `DATA_DIR/jwt-secret`, or generated once (32 random bytes, hex) and
 * written there with mode 600. Creation is atomic: the secret is written to a private temporary file and linked
 * to its name, which fails when another process got there first (then that process's secret is used), so no
 * process ever reads a half-written file. An unreadable, too short or group/world-readable file stops the start
 * with a `config:` line naming the file and what to do.
 */
export async function loadOrCreateSecret(dataDir: string): Promise<string> {
  const file = path.join(dataDir, SECRET_FILE);
  const existing = await readSecret(file);
  if (existing !== null) return existing;
  await mkdir(dataDir, { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fh = await open(tmp, 'wx', 0o600);
  try {
    await fh.writeFile(`${randomBytes(32).toString('hex')}\n`);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await link(tmp, file);
  } catch (err) {
    if (codeOf(err) !== 'EEXIST') throw new Error(`config: cannot create the secret file ${file} (${codeOf(err) ?? (err as Error).message}); set JWT_SECRET or make DATA_DIR writable`, { cause: err });
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
  const secret = await readSecret(file);
  if (secret === null) throw new Error(`config: the secret file ${file} vanished while starting`);
  return secret;
}

async function readSecret(file: string): Promise<string | null> {
  let text: string;
  try {
    if (process.platform !== 'win32') {
      const s = await stat(file);
      if (s.isFile() && (s.mode & 0o077) !== 0) {
        throw new Error(`config: the secret file ${file} is readable by others (mode ${(s.mode & 0o777).toString(8)}); chmod 600 it`);
      }
    }
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (codeOf(err) === 'ENOENT') return null;
    if ((err as Error).message.startsWith('config:')) throw err;
    throw new Error(`config: cannot read the secret file ${file} (${codeOf(err) ?? (err as Error).message}); fix it, or delete it to generate a new one (every session and recipient link then ends), or set JWT_SECRET`, { cause: err });
  }
  const secret = text.trim();
  if (secret.length < MIN_SECRET_LENGTH) {
    throw new Error(`config: the secret file ${file} holds ${secret.length} characters, at least ${MIN_SECRET_LENGTH} are needed; delete it to generate a new one (every session and recipient link then ends), or set JWT_SECRET`);
  }
  return secret;
}
