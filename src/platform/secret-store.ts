import type { Database } from './db/index.js';
import * as repo from './repo.js';
import {
  decryptSecret,
  encryptSecret,
  isEncrypted,
  secretContext,
  SecretError,
  type SecretColumn,
  type SecretsKeyring,
} from './secrets.js';

/**
 * The stored secrets as a whole (every module's `SecretColumn`): the start-up check and the re-encryption that
 * `npm run secrets:rotate` runs (and the start, for plain-text values left by an older version).
 */

export interface StartupSecrets {
  /** Values found per column label and key version (`plain` = not encrypted yet). */
  found: Record<string, Record<string, number>>;
  /** Plain-text values encrypted at this start. */
  encrypted: number;
  /** Values under the previous key re-encrypted at this start (embedded database only). */
  reencrypted: number;
}

const label = (c: SecretColumn) => `${c.label} (${c.table}.${c.column})`;

/**
 * Checks, before the server serves, that the configured keys read what is stored, in one line per problem
 * (`config: ...`): stored secrets without a key; a key version that is neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS;
 * a key that fails GCM authentication on a probe value (one value per column and key version). Then encrypts the
 * values still in plain text (older versions stored webhook secrets so), and with `reencryptPrevious` (the embedded
 * database: one process) re-encrypts the values of the previous key under the current one.
 */
export async function prepareStoredSecrets(
  db: Database,
  ring: SecretsKeyring | null,
  columns: readonly SecretColumn[],
  opts: { reencryptPrevious: boolean },
): Promise<StartupSecrets> {
  const found: StartupSecrets['found'] = {};
  const problems: string[] = [];
  let plain = 0;
  let previous = 0;
  await db.withSystem(async (tx) => {
    for (const col of columns) {
      for (const v of await repo.secretVersions(tx, col)) {
        (found[col.label] ??= {})[v.version || 'plain'] = v.n;
        if (!ring) {
          problems.push(
            `config: SECRETS_KEY is required: the database holds ${v.n} ${label(col)}${v.version ? ` encrypted under key version ${v.version}` : ' values'}; set SECRETS_KEY (docs/SECRETS.md)`,
          );
          continue;
        }
        if (!v.version) {
          plain += v.n;
          continue;
        }
        if (v.version === ring.previous?.id) previous += v.n;
        try {
          decryptSecret(ring, v.value, secretContext(col, [v.k1, v.k2]));
        } catch (err) {
          if (!(err instanceof SecretError)) throw err;
          problems.push(
            err.reason === 'UNKNOWN_KEY_VERSION'
              ? `config: ${v.n} ${label(col)} values are encrypted under key version ${v.version}, which is neither SECRETS_KEY (${ring.current.id}) nor SECRETS_KEY_PREVIOUS${ring.previous ? ` (${ring.previous.id})` : ''}; configure the key they were written with`
              : `config: the key of version ${v.version} does not decrypt the stored ${label(col)} (GCM authentication failed): a wrong key, or damaged values`,
          );
        }
      }
    }
  });
  if (problems.length) throw new Error(problems[0]);
  let encrypted = 0;
  let reencrypted = 0;
  if (ring && plain > 0) encrypted = (await reencryptStoredSecrets(db, ring, columns, { plainOnly: true })).reencrypted;
  if (ring && previous > 0 && opts.reencryptPrevious)
    reencrypted = (await reencryptStoredSecrets(db, ring, columns, { plainOnly: false })).reencrypted;
  return { found, encrypted, reencrypted };
}

export interface Reencryption {
  /** Values rewritten under the current key (plain text encrypted, or another key's values re-encrypted). */
  reencrypted: number;
  /** Values changed by someone else while being rewritten (already under the current key: left as they are). */
  raced: number;
  /** Values that could not be read (unknown key version, wrong key): one message per column and reason. */
  unreadable: string[];
}

/**
 * Rewrites every stored secret not under the current key (`plainOnly`: only the plain-text ones) under it, in
 * batches of short transactions, each value replaced only while it is still the value read (a value written
 * meanwhile by the API, already under the current key, wins). Idempotent: a second run finds nothing to do. Safe
 * with the server running on PostgreSQL, as long as every instance knows both keys.
 */
export async function reencryptStoredSecrets(
  db: Database,
  ring: SecretsKeyring,
  columns: readonly SecretColumn[],
  opts: { plainOnly: boolean; batch?: number },
): Promise<Reencryption> {
  const out: Reencryption = { reencrypted: 0, raced: 0, unreadable: [] };
  const batch = opts.batch ?? 200;
  for (const col of columns) {
    let after: [string, string] | null = null;
    const unreadable = new Map<string, number>();
    for (;;) {
      const rows = await db.withSystem((tx) =>
        repo.staleSecrets(tx, col, { version: ring.current.id, plainOnly: opts.plainOnly, after, limit: batch }),
      );
      if (rows.length === 0) break;
      after = [rows[rows.length - 1].k1, rows[rows.length - 1].k2];
      await db.withSystem(async (tx) => {
        for (const r of rows) {
          const context = secretContext(col, [r.k1, r.k2]);
          let plain: string;
          try {
            plain = isEncrypted(r.value) ? decryptSecret(ring, r.value, context) : r.value;
          } catch (err) {
            if (!(err instanceof SecretError)) throw err;
            unreadable.set(err.message, (unreadable.get(err.message) ?? 0) + 1);
            continue;
          }
          if (await repo.replaceSecret(tx, col, r.k1, r.k2, r.value, encryptSecret(ring, plain, context))) out.reencrypted++;
          else out.raced++;
        }
      });
      if (rows.length < batch) break;
    }
    for (const [message, n] of unreadable) out.unreadable.push(`${n} ${label(col)}: ${message}`);
  }
  return out;
}
