import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { MIN_SECRET_LENGTH } from './keys.js';
import { newSecretsKeyText, parseSecretsKey } from './secrets.js';

/** The file, in DATA_DIR, that keeps the generated secret of an installation without JWT_SECRET. */
export const SECRET_FILE = 'jwt-secret';
/** The file, in DATA_DIR, that keeps the generated key of the secrets at rest of an installation without SECRETS_KEY. */
export const SECRETS_KEY_FILE = 'secrets-key';

/** One generated secret kept in DATA_DIR: its file, the setting that replaces it, what deleting it costs, its check. */
export interface StoredSecretKind {
  file: string;
  setting: string;
  /** What happens when the file is deleted and a new one generated. */
  loss: string;
  generate(): string;
  /** The problem with the file's text, or null. */
  problem(text: string): string | null;
}

export const JWT_SECRET_KIND: StoredSecretKind = {
  file: SECRET_FILE,
  setting: 'JWT_SECRET',
  loss: 'every session and recipient link then ends',
  generate: () => randomBytes(32).toString('hex'),
  problem: (text) => (text.length < MIN_SECRET_LENGTH ? `holds ${text.length} characters, at least ${MIN_SECRET_LENGTH} are needed` : null),
};

export const SECRETS_KEY_KIND: StoredSecretKind = {
  file: SECRETS_KEY_FILE,
  setting: 'SECRETS_KEY',
  loss: 'the stored chat tokens and webhook secrets can then no longer be read and must be set again',
  generate: newSecretsKeyText,
  problem: (text) => {
    try {
      parseSecretsKey('key', text);
      return null;
    } catch {
      return 'is not a 32-byte key (64 hex characters)';
    }
  },
};

const codeOf = (err: unknown) => (err as NodeJS.ErrnoException).code;

/**
 * The embedded default's secret: read from `DATA_DIR/jwt-secret`, or generated once (32 random bytes, hex) and
 * written there with mode 600. Creation is atomic: the secret is written to a private temporary file and linked
 * to its name, which fails when another process got there first (then that process's secret is used), so no
 * process ever reads a half-written file. An unreadable, too short or group/world-readable file stops the start
 * with a `config:` line naming the file and what to do.
 */
export async function loadOrCreateSecret(dataDir: string, kind: StoredSecretKind = JWT_SECRET_KIND): Promise<string> {
  const file = path.join(dataDir, kind.file);
  const existing = await readSecret(file, kind);
  if (existing !== null) return existing;
  await mkdir(dataDir, { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fh = await open(tmp, 'wx', 0o600);
  try {
    await fh.writeFile(`${kind.generate()}\n`);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await link(tmp, file);
  } catch (err) {
    if (codeOf(err) !== 'EEXIST')
      throw new Error(
        `config: cannot create the secret file ${file} (${codeOf(err) ?? (err as Error).message}); set ${kind.setting} or make DATA_DIR writable`,
        { cause: err },
      );
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
  const secret = await readSecret(file, kind);
  if (secret === null) throw new Error(`config: the secret file ${file} vanished while starting`);
  return secret;
}

async function readSecret(file: string, kind: StoredSecretKind): Promise<string | null> {
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
    throw new Error(
      `config: cannot read the secret file ${file} (${codeOf(err) ?? (err as Error).message}); fix it, or delete it to generate a new one (${kind.loss}), or set ${kind.setting}`,
      { cause: err },
    );
  }
  const secret = text.trim();
  const problem = kind.problem(secret);
  if (problem)
    throw new Error(`config: the secret file ${file} ${problem}; delete it to generate a new one (${kind.loss}), or set ${kind.setting}`);
  return secret;
}
