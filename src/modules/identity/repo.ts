import { prepared, type Database, type TenantContext, type Tx } from '../../platform/db/index.js';
import { selectList, type SnakeRow } from '../../platform/db/columns.js';
import { authSession, refreshToken, users } from './tables.js';

/** A user as stored (derived from the table), with and without the password hash. */
export type UserRow = SnakeRow<typeof users.$inferSelect>;
export type UserView = Omit<UserRow, 'password_hash'>;

/** Every column of a user but the password hash (alias `u`). */
export const USER_COLUMNS = selectList(users, 'u', { omit: ['passwordHash'] });

// ---------------------------------------------------------------- users

export async function loginTaken(tx: Tx, organizationId: string, email: string | null, phone: string | null): Promise<boolean> {
  const dup = await tx.query('SELECT 1 FROM users WHERE organization_id = $1 AND (email = $2 OR phone = $3)', [
    organizationId,
    email,
    phone,
  ]);
  return dup.rowCount > 0;
}

export type NewUserRow = Pick<
  UserRow,
  'organization_id' | 'id' | 'email' | 'phone' | 'password_hash' | 'display_name' | 'role' | 'dispatch' | 'subadmin' | 'platform_admin'
>;

export async function insertUser(tx: Tx, u: NewUserRow): Promise<UserRow> {
  const { rows } = await tx.query<UserRow>(
    `INSERT INTO users (organization_id, id, email, phone, password_hash, display_name, role, dispatch, subadmin, platform_admin)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10) RETURNING *`,
    [u.organization_id, u.id, u.email, u.phone, u.password_hash, u.display_name, u.role, u.dispatch, u.subadmin, u.platform_admin],
  );
  return rows[0];
}

/** Active accounts with this email (or one of these phones), across organizations (login), at most 20. */
export async function loginCandidates(
  tx: Tx,
  by: { email: string } | { phones: string[] },
  organizationId: string | null,
): Promise<UserRow[]> {
  const { rows } = await tx.query<UserRow>(
    `SELECT u.* FROM users u
      WHERE u.active AND ${'email' in by ? 'u.email = $1' : 'u.phone = ANY($1::text[])'} AND ($2::text IS NULL OR u.organization_id = $2)
      ORDER BY u.organization_id LIMIT 20`,
    ['email' in by ? by.email : by.phones, organizationId],
  );
  return rows;
}

export async function listUsers(
  tx: Tx,
  f: { role: string | null; after: string | null; pattern: string | null; limit: number },
): Promise<UserView[]> {
  const { rows } = await tx.query<UserView>(
    `SELECT ${USER_COLUMNS} FROM users u
      WHERE ($1::text IS NULL OR role = $1) AND ($2::text IS NULL OR id < $2)
        AND ($3::text IS NULL OR email ILIKE $3 OR display_name ILIKE $3)
      ORDER BY id DESC LIMIT $4`,
    [f.role, f.after, f.pattern, f.limit],
  );
  return rows;
}

/** The active users with what decides their principal. */
export async function activeUserRoles(tx: Tx): Promise<Pick<UserRow, 'id' | 'role' | 'dispatch' | 'subadmin' | 'platform_admin'>[]> {
  const { rows } = await tx.query<Pick<UserRow, 'id' | 'role' | 'dispatch' | 'subadmin' | 'platform_admin'>>(
    'SELECT id, role, dispatch, subadmin, platform_admin FROM users WHERE active',
  );
  return rows;
}

/** A user's phone (E.164), or null. */
export async function userPhone(tx: Tx, userId: string): Promise<string | null> {
  const { rows } = await tx.query<{ phone: string | null }>('SELECT phone FROM users WHERE id = $1', [userId]);
  return rows[0]?.phone ?? null;
}

/** Active users per role (the dashboard). */
export async function activeUsersByRole(tx: Tx): Promise<Record<string, number>> {
  const { rows } = await tx.query<{ role: string; n: number }>('SELECT role, count(*)::int AS n FROM users WHERE active GROUP BY role');
  return Object.fromEntries(rows.map((r) => [r.role, r.n]));
}

export async function userExists(tx: Tx, userId: string, role: string | null): Promise<boolean> {
  const { rowCount } = await tx.query('SELECT 1 FROM users WHERE id = $1 AND ($2::text IS NULL OR role = $2)', [userId, role]);
  return rowCount > 0;
}

const ME_SQL = prepared(`SELECT ${USER_COLUMNS}, o.name AS organization_name
   FROM users u LEFT JOIN organization_name o ON o.id = u.organization_id WHERE u.id = $1`);

/** The calling user with his organization's name, one statement in one round trip (the hottest read). */
export async function readMe(
  db: Database,
  tenant: TenantContext,
  userId: string,
): Promise<(UserView & { organization_name: string | null }) | null> {
  const rows = await db.tenantRead<UserView & { organization_name: string | null }>(tenant, ME_SQL, [userId]);
  return rows[0] ?? null;
}

export async function findUser(tx: Tx, id: string, lock = false): Promise<UserView | null> {
  const { rows } = await tx.query<UserView>(`SELECT ${USER_COLUMNS} FROM users u WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
  return rows[0] ?? null;
}

/** Every organization administrator (not dispatch, sub-administrator or platform), locked in id order. */
export async function lockAdministrators(tx: Tx): Promise<{ id: string; active: boolean }[]> {
  const { rows } = await tx.query<{ id: string; active: boolean }>(
    `SELECT id, active FROM users WHERE role = 'administrator' AND NOT dispatch AND NOT subadmin AND NOT platform_admin ORDER BY id FOR UPDATE`,
  );
  return rows;
}

export async function setUserActive(tx: Tx, id: string, active: boolean): Promise<UserView> {
  const { rows } = await tx.query<UserView>(`UPDATE users u SET active = $2, updated_at = now() WHERE id = $1 RETURNING ${USER_COLUMNS}`, [
    id,
    active,
  ]);
  return rows[0];
}

// ---------------------------------------------------------------- rate limits and login throttling (system transactions)

/** Counts one request in the current window; the weighted count of this and the previous window, and seconds to the window's end. */
export async function countRateLimited(tx: Tx, key: string, windowSeconds: number): Promise<{ weighted: number; retry_after: number }> {
  const { rows } = await tx.query<{ weighted: number; retry_after: number }>(
    `WITH w AS (SELECT to_timestamp(floor(extract(epoch FROM now()) / $2) * $2) AS start),
     cur AS (
       INSERT INTO rate_limit_bucket (key, window_start, count) SELECT $1, w.start, 1 FROM w
       ON CONFLICT (key, window_start) DO UPDATE SET count = rate_limit_bucket.count + 1
       RETURNING count, window_start)
     SELECT cur.count + coalesce((SELECT b.count FROM rate_limit_bucket b WHERE b.key = $1 AND b.window_start = cur.window_start - make_interval(secs => $2)), 0)
            * (1 - extract(epoch FROM now() - cur.window_start) / $2) AS weighted,
            ceil($2 - extract(epoch FROM now() - cur.window_start)) AS retry_after
       FROM cur`,
    [key, windowSeconds],
  );
  return rows[0];
}

export async function pruneRateLimitBuckets(tx: Tx): Promise<void> {
  await tx.query("DELETE FROM rate_limit_bucket WHERE window_start < now() - interval '2 days'");
}

export interface ThrottleState {
  key: string;
  failures: number;
  stale: boolean;
  wait: number | null;
  known: boolean;
}

/** The account and pair rows of a login attempt, created when missing and locked in key order (no deadlock). */
export async function lockThrottle(
  tx: Tx,
  k: { accountKey: string; pairKey: string; login: string; address: string },
  t: { accountWindowSeconds: number; knownAddressDays: number },
): Promise<ThrottleState[]> {
  await tx.query('INSERT INTO login_throttle (key) VALUES ($1), ($2) ON CONFLICT (key) DO NOTHING', [k.accountKey, k.pairKey]);
  const { rows } = await tx.query<ThrottleState>(
    `SELECT key, failures,
            window_start < now() - (CASE WHEN key = $1 THEN make_interval(secs => $3) ELSE interval '24 hours' END) AS stale,
            CASE WHEN blocked_until > now() THEN ceil(extract(epoch FROM blocked_until - now()))::int END AS wait,
            EXISTS (SELECT 1 FROM login_known_address k WHERE k.login = $4 AND k.address = $5
                     AND k.last_success_at > now() - make_interval(days => $6)) AS known
       FROM login_throttle WHERE key IN ($1, $2) ORDER BY key FOR UPDATE`,
    [k.accountKey, k.pairKey, t.accountWindowSeconds, k.login, k.address, t.knownAddressDays],
  );
  return rows;
}

export async function blockThrottleKey(tx: Tx, key: string, seconds: number): Promise<void> {
  await tx.query('UPDATE login_throttle SET blocked_until = now() + make_interval(secs => $2), updated_at = now() WHERE key = $1', [
    key,
    seconds,
  ]);
}

export async function setPairAttempts(tx: Tx, key: string, attempts: number, restartWindow: boolean, delaySeconds: number): Promise<void> {
  await tx.query(
    `UPDATE login_throttle SET failures = $2, window_start = CASE WHEN $3 THEN now() ELSE window_start END,
            blocked_until = CASE WHEN $4 > 0 THEN now() + make_interval(secs => $4) END, updated_at = now()
      WHERE key = $1`,
    [key, attempts, restartWindow, delaySeconds],
  );
}

export async function pruneLoginThrottle(tx: Tx, knownAddressDays: number): Promise<void> {
  await tx.query(
    "DELETE FROM login_throttle WHERE updated_at < now() - interval '2 days' AND (blocked_until IS NULL OR blocked_until < now())",
  );
  await tx.query('DELETE FROM login_known_address WHERE last_success_at < now() - make_interval(days => $1)', [knownAddressDays]);
}

/** One more failure for the account key (a new window when the last one is over). */
export async function countAccountFailure(tx: Tx, key: string, accountWindowSeconds: number): Promise<void> {
  await tx.query(
    `INSERT INTO login_throttle (key, failures, window_start) VALUES ($1, 1, now())
     ON CONFLICT (key) DO UPDATE SET
       failures = CASE WHEN login_throttle.window_start < now() - make_interval(secs => $2) THEN 1 ELSE login_throttle.failures + 1 END,
       window_start = CASE WHEN login_throttle.window_start < now() - make_interval(secs => $2) THEN now() ELSE login_throttle.window_start END,
       updated_at = now()`,
    [key, accountWindowSeconds],
  );
}

/** A successful login: the pair starts over and the address becomes known-good for the login. */
export async function clearPairAndRememberAddress(tx: Tx, pairKey: string, login: string, address: string): Promise<void> {
  await tx.query('DELETE FROM login_throttle WHERE key = $1', [pairKey]);
  await tx.query(
    `INSERT INTO login_known_address (login, address) VALUES ($1, $2)
     ON CONFLICT (login, address) DO UPDATE SET last_success_at = now()`,
    [login, address],
  );
}

// ---------------------------------------------------------------- sessions and refresh tokens

export async function insertSession(tx: Tx, organizationId: string, id: string, userId: string, userAgent: string | null): Promise<void> {
  await tx.query('INSERT INTO auth_session (organization_id, id, user_id, user_agent) VALUES ($1,$2,$3,$4)', [
    organizationId,
    id,
    userId,
    userAgent,
  ]);
}

export async function insertRefreshToken(
  tx: Tx,
  organizationId: string,
  id: string,
  sessionId: string,
  tokenHash: string,
  expiresAt: Date,
): Promise<void> {
  await tx.query('INSERT INTO refresh_token (organization_id, id, session_id, token_hash, expires_at) VALUES ($1,$2,$3,$4,$5)', [
    organizationId,
    id,
    sessionId,
    tokenHash,
    expiresAt,
  ]);
}

/** Revokes a live session and announces it (NOTIFY session_revoked: every instance forgets it, open streams close). */
export async function revokeSession(tx: Tx, organizationId: string, sessionId: string, reason: string): Promise<void> {
  await tx.query(
    'UPDATE auth_session SET revoked_at = now(), revoked_reason = $3 WHERE organization_id = $1 AND id = $2 AND revoked_at IS NULL',
    [organizationId, sessionId, reason],
  );
  await tx.query("SELECT pg_notify('session_revoked', $1)", [sessionId]);
}

export type PresentedRefreshToken = Pick<
  SnakeRow<typeof refreshToken.$inferSelect>,
  'organization_id' | 'session_id' | 'used_at' | 'expires_at'
> &
  Pick<SnakeRow<typeof authSession.$inferSelect>, 'revoked_at'> & { in_grace: boolean };

/** A presented refresh token (locked) with its session's state; `in_grace` when it was used within the grace window. */
export async function lockRefreshToken(tx: Tx, tokenHash: string, graceSeconds: number): Promise<PresentedRefreshToken | null> {
  const { rows } = await tx.query<PresentedRefreshToken>(
    `SELECT r.organization_id, r.session_id, r.used_at, r.expires_at, s.revoked_at,
            r.used_at > now() - make_interval(secs => $2) AS in_grace
       FROM refresh_token r JOIN auth_session s ON s.organization_id = r.organization_id AND s.id = r.session_id
      WHERE r.token_hash = $1 FOR UPDATE OF r`,
    [tokenHash, graceSeconds],
  );
  return rows[0] ?? null;
}

/** A refresh token by hash: undefined when it does not exist, else when it was used. */
export async function refreshTokenUse(tx: Tx, organizationId: string, tokenHash: string): Promise<{ used_at: Date | null } | undefined> {
  const { rows } = await tx.query<{ used_at: Date | null }>(
    'SELECT used_at FROM refresh_token WHERE organization_id = $1 AND token_hash = $2',
    [organizationId, tokenHash],
  );
  return rows[0];
}

export async function markRefreshTokenUsed(tx: Tx, organizationId: string, tokenHash: string): Promise<Date> {
  const { rows } = await tx.query<{ used_at: Date }>(
    'UPDATE refresh_token SET used_at = now() WHERE organization_id = $1 AND token_hash = $2 RETURNING used_at',
    [organizationId, tokenHash],
  );
  return rows[0].used_at;
}

/** The active user of a session. */
export async function sessionUser(tx: Tx, organizationId: string, sessionId: string): Promise<UserRow | null> {
  const { rows } = await tx.query<UserRow>(
    'SELECT u.* FROM users u JOIN auth_session s ON s.organization_id = u.organization_id AND s.user_id = u.id WHERE s.organization_id = $1 AND s.id = $2 AND u.active',
    [organizationId, sessionId],
  );
  return rows[0] ?? null;
}

/** The session of a refresh token of this user. */
export async function sessionOfRefreshToken(tx: Tx, tokenHash: string, userId: string): Promise<string | null> {
  const { rows } = await tx.query<{ session_id: string }>(
    `SELECT r.session_id FROM refresh_token r JOIN auth_session s ON s.organization_id = r.organization_id AND s.id = r.session_id
      WHERE r.token_hash = $1 AND s.user_id = $2`,
    [tokenHash, userId],
  );
  return rows[0]?.session_id ?? null;
}

export async function liveSessionIds(tx: Tx, organizationId: string, userId: string): Promise<string[]> {
  const { rows } = await tx.query<{ id: string }>(
    'SELECT id FROM auth_session WHERE organization_id = $1 AND user_id = $2 AND revoked_at IS NULL',
    [organizationId, userId],
  );
  return rows.map((r) => r.id);
}

/** Prepared: read for every session at least once a minute (SESSION_RECHECK_MS). */
const SESSION_LIVE = prepared(
  `SELECT 1 FROM auth_session s JOIN users u ON u.organization_id = s.organization_id AND u.id = s.user_id
    WHERE s.organization_id = $1 AND s.id = $2 AND s.revoked_at IS NULL AND u.active`,
);

/** Whether the session is live and its user active. */
export async function sessionLive(tx: Tx, organizationId: string, sessionId: string): Promise<boolean> {
  const { rows } = await tx.query(SESSION_LIVE, [organizationId, sessionId]);
  return rows.length > 0;
}

/** Of these sessions (every organization), the ones still valid (not revoked, user active), as `organization:session`. */
export async function aliveSessions(tx: Tx, sessionIds: string[]): Promise<Set<string>> {
  const { rows } = await tx.query<{ id: string; organization_id: string }>(
    `SELECT s.id, s.organization_id FROM auth_session s JOIN users u ON u.organization_id = s.organization_id AND u.id = s.user_id
      WHERE s.id = ANY($1::text[]) AND s.revoked_at IS NULL AND u.active`,
    [sessionIds],
  );
  return new Set(rows.map((r) => `${r.organization_id}:${r.id}`));
}
