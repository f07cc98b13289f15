import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { AppError } from './errors.js';

/**
 * Secrets at rest (chat channel tokens, webhook signing secrets): AES-256-GCM with a random 12-byte IV per value,
 * under the key of one setting (`SECRETS_KEY`, or the key generated once into DATA_DIR on the embedded database).
 * A stored value reads `enc:v1:<key id>:<iv>:<ciphertext and tag>` (base64url): the key id (the key's version: the
 * first 8 hex characters of an HMAC of the key) says which key wrote it, so a rotation (`SECRETS_KEY` new,
 * `SECRETS_KEY_PREVIOUS` old) reads both while `npm run secrets:rotate` re-encrypts under the new one. The value is
 * bound to its row (`table:<key columns>` as associated data): a ciphertext copied to another row does not decrypt.
 */

export const SECRET_PREFIX = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface SecretsKey {
  /** The key's version as written into every value it encrypts. */
  id: string;
  key: Buffer;
}

/** The current key (encrypts) and the previous one (still decrypts during a rotation). */
export interface SecretsKeyring {
  current: SecretsKey;
  previous: SecretsKey | null;
}

/** The key's version: 8 hex characters of HMAC-SHA-256(key, label); reveals nothing usable about the key. */
export function keyIdOf(key: Buffer): string {
  return createHmac('sha256', key).update('delivery-api/secrets-key-id/v1').digest('hex').slice(0, 8);
}

/**
 * A setting's 32-byte key: 64 hex characters, or base64/base64url (`openssl rand -base64 32`). Throws a one-line
 * `config:` error naming the setting (never its value).
 */
export function parseSecretsKey(name: string, value: string): Buffer {
  const v = value.trim();
  let key: Buffer | null = null;
  if (/^[0-9a-fA-F]{64}$/.test(v)) key = Buffer.from(v, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(v)) key = Buffer.from(v.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (!key || key.length !== 32) {
    throw new Error(
      `config: ${name} must be a 32-byte key written as 64 hex characters or base64 (e.g. openssl rand -base64 32), got ${v.length} characters`,
    );
  }
  return key;
}

export function keyring(current: Buffer, previous: Buffer | null = null): SecretsKeyring {
  const ring: SecretsKeyring = {
    current: { id: keyIdOf(current), key: current },
    previous: previous ? { id: keyIdOf(previous), key: previous } : null,
  };
  if (ring.previous && ring.previous.id === ring.current.id) ring.previous = null;
  return ring;
}

/** A fresh key, hex, for the embedded default's key file. */
export const newSecretsKeyText = () => randomBytes(32).toString('hex');

export const isEncrypted = (stored: string) => stored.startsWith(SECRET_PREFIX);

/** The key version a stored value was written with (null: not an encrypted value). */
export function keyVersionOf(stored: string): string | null {
  if (!isEncrypted(stored)) return null;
  return stored.slice(SECRET_PREFIX.length).split(':')[0] ?? null;
}

export type SecretFailure = 'UNKNOWN_KEY_VERSION' | 'UNDECRYPTABLE' | 'MALFORMED' | 'NOT_ENCRYPTED';

/** A stored value that cannot be read: its key version is not configured, the key is wrong or the value damaged. */
export class SecretError extends Error {
  constructor(
    readonly reason: SecretFailure,
    message: string,
    readonly keyVersion: string | null = null,
  ) {
    super(message);
    this.name = 'SecretError';
  }
}

const b64 = (b: Buffer) => b.toString('base64url');

/** Encrypts `plain` under the current key, bound to `context` (the row). */
export function encryptSecret(ring: SecretsKeyring, plain: string, context: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', ring.current.key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${SECRET_PREFIX}${ring.current.id}:${b64(iv)}:${b64(body)}`;
}

/** Decrypts a stored value written for `context` under the current or the previous key; throws `SecretError`. */
export function decryptSecret(ring: SecretsKeyring, stored: string, context: string): string {
  if (!isEncrypted(stored)) throw new SecretError('NOT_ENCRYPTED', 'the stored secret is not encrypted');
  const [version, ivText, bodyText, ...rest] = stored.slice(SECRET_PREFIX.length).split(':');
  if (!version || !ivText || !bodyText || rest.length) throw new SecretError('MALFORMED', 'the stored secret is malformed');
  const key = [ring.current, ring.previous].find((k) => k?.id === version);
  if (!key) {
    throw new SecretError(
      'UNKNOWN_KEY_VERSION',
      `the stored secret is encrypted under key version ${version}, which is neither SECRETS_KEY (${ring.current.id})${ring.previous ? ` nor SECRETS_KEY_PREVIOUS (${ring.previous.id})` : ' nor a SECRETS_KEY_PREVIOUS'}`,
      version,
    );
  }
  const iv = Buffer.from(ivText, 'base64url');
  const body = Buffer.from(bodyText, 'base64url');
  if (iv.length !== IV_BYTES || body.length < TAG_BYTES) throw new SecretError('MALFORMED', 'the stored secret is malformed', version);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, iv);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretError(
      'UNDECRYPTABLE',
      `the stored secret does not decrypt under key version ${version} (wrong key, or a damaged or moved value)`,
      version,
    );
  }
}

/**
 * A column that holds encrypted secrets: its table, the key columns that identify a row (bound into every value)
 * and a name for messages. Modules declare theirs; the composition root lists them for the start-up check and
 * `npm run secrets:rotate`.
 */
export interface SecretColumn {
  table: string;
  column: string;
  keys: readonly [string, string];
  /** What the value is, for messages ("webhook signing secret"). */
  label: string;
}

/** The associated data of a row's value: `table:<key 1>:<key 2>`. */
export const secretContext = (col: Pick<SecretColumn, 'table'>, keys: readonly string[]) => `${col.table}:${keys.join(':')}`;

/** The keyring of a request path that writes a secret: 503 `SECRETS_KEY_MISSING` when the server has none. */
export function requireKeyring(ring: SecretsKeyring | null): SecretsKeyring {
  if (!ring) {
    throw new AppError(
      503,
      'SECRETS_KEY_MISSING',
      'The server has no SECRETS_KEY to store secrets with; the operator must set it (docs/SECRETS.md)',
    );
  }
  return ring;
}

/**
 * The request schema of a write-only secret: visible ASCII without spaces (it goes into an HTTP header or an HMAC),
 * `minLength`..`maxLength` characters; an empty or too long value is a 400 and nothing is written.
 */
export const SecretInput = (minLength: number, maxLength: number, description: string) =>
  Type.String({
    minLength,
    maxLength,
    pattern: '^[\\x21-\\x7E]+$',
    writeOnly: true,
    description: `${description} Write-only: never returned.`,
  });
