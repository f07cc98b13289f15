import { hash as argonHash, verify as argonVerify } from '@node-rs/argon2';
import { AppError } from '../../platform/errors.js';
import { newId, randomToken, sha256Hex } from '../../platform/ids.js';
import { signAccessToken, tenantOf, type AccessClaims, type Actor, type AppRole, type Principal } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import type { AppContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';

export interface UserRow {
  organization_id: string;
  id: string;
  email: string | null;
  phone: string | null;
  password_hash: string;
  display_name: string;
  role: AppRole;
  dispatch: boolean;
  subadmin: boolean;
  platform_admin: boolean;
  active: boolean;
  created_at: Date;
  updated_at: Date;
}

export const USER_COLUMNS = 'organization_id, id, email, phone, display_name, role, dispatch, subadmin, platform_admin, active, created_at, updated_at';

export function principalOf(u: Pick<UserRow, 'role' | 'dispatch' | 'subadmin' | 'platform_admin'>): Principal {
  if (u.platform_admin) return 'platform';
  if (u.role === 'administrator') return u.subadmin ? 'subadmin' : u.dispatch ? 'dispatch' : 'administrator';
  return u.role;
}

export function publicUser(u: Omit<UserRow, 'password_hash'>) {
  return {
    id: u.id,
    organization_id: u.organization_id,
    email: u.email,
    phone: u.phone,
    display_name: u.display_name,
    role: u.role,
    kind: principalOf(u),
    dispatch: u.dispatch,
    subadmin: u.subadmin,
    active: u.active,
    created_at: u.created_at,
  };
}

const ARGON = { memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;
const COMMON = new Set(['password', 'password1', 'password123', '123456789', '1234567890', 'qwertyuiop', 'letmein123', 'iloveyou12']);

/** At least 10 characters, a letter and a digit, not a well-known password, not the email. */
export function passwordProblems(password: string, email?: string | null): string | null {
  if (password.length < 10) return 'must be at least 10 characters';
  if (password.length > 200) return 'must be at most 200 characters';
  if (!/[A-Za-z]/.test(password) || !/[0-9]/.test(password)) return 'must contain a letter and a digit';
  if (COMMON.has(password.toLowerCase())) return 'is too common';
  if (email && password.toLowerCase().includes(email.split('@')[0].toLowerCase()) && email.split('@')[0].length >= 4) return 'must not contain the email name';
  return null;
}

export const hashPassword = (password: string) => argonHash(password, ARGON);

export interface NewUser {
  email?: string | null;
  phone?: string | null;
  password: string;
  display_name: string;
  role: AppRole;
  dispatch?: boolean;
  subadmin?: boolean;
  platform_admin?: boolean;
}

// A valid hash to verify against when the account does not exist, so timing does not reveal accounts.
let dummyHash: Promise<string> | null = null;

export function createIdentityService(ctx: AppContext) {
  const { db, config } = ctx;
  const sessionCache = new Map<string, { active: boolean; at: number }>();
  const SESSION_CACHE_MS = 5_000;

  void db
    .listen('session_revoked', (sid) => sessionCache.set(sid, { active: false, at: Date.now() + 3_600_000 }))
    .then((unlisten) => ctx.onClose.push(unlisten))
    .catch(() => undefined);
  // Revocations announced while the listener was down were missed: forget what is cached.
  ctx.onClose.push(db.onListenerChange(() => sessionCache.clear()));

  async function insertUser(tx: Tx, organizationId: string, input: NewUser): Promise<UserRow> {
    const problem = passwordProblems(input.password, input.email);
    if (problem) throw AppError.badRequest(`password ${problem}`, [{ field: 'password', message: problem }], 'WEAK_PASSWORD');
    if (!input.email && !input.phone) throw AppError.badRequest('email or phone is required', [{ field: 'email', message: 'email or phone is required' }]);
    const email = input.email ? input.email.trim().toLowerCase() : null;
    const dup = await tx.query('SELECT 1 FROM users WHERE organization_id = $1 AND (email = $2 OR phone = $3)', [organizationId, email, input.phone ?? null]);
    if (dup.rowCount) throw AppError.conflict('A user with this email or phone already exists in the organization', 'DUPLICATE_USER');
    const { rows } = await tx.query<UserRow>(
      `INSERT INTO users (organization_id, id, email, phone, password_hash, display_name, role, dispatch, subadmin, platform_admin)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10) RETURNING *`,
      [
        organizationId,
        newId(),
        email,
        input.phone ?? null,
        await hashPassword(input.password),
        input.display_name,
        input.role,
        input.dispatch ?? false,
        input.subadmin ?? false,
        input.platform_admin ?? false,
      ],
    );
    return rows[0];
  }

  /** Sliding-window counter in PostgreSQL, shared by every API instance: this minute plus the weighted previous one. */
  async function rateLimit(key: string, limit: number): Promise<void> {
    const weighted = await db.withSystem(async (tx) => {
      const { rows } = await tx.query<{ weighted: number }>(
        `WITH cur AS (
           INSERT INTO rate_limit_bucket (key, window_start, count) VALUES ($1, date_trunc('minute', now()), 1)
           ON CONFLICT (key, window_start) DO UPDATE SET count = rate_limit_bucket.count + 1
           RETURNING count, window_start)
         SELECT cur.count + coalesce((SELECT b.count FROM rate_limit_bucket b WHERE b.key = $1 AND b.window_start = cur.window_start - interval '1 minute'), 0)
                * (1 - extract(epoch FROM now() - cur.window_start) / 60) AS weighted
           FROM cur`,
        [key],
      );
      if (Math.random() < 0.01) await tx.query("DELETE FROM rate_limit_bucket WHERE window_start < now() - interval '10 minutes'");
      return Number(rows[0].weighted);
    });
    if (weighted > limit) throw new AppError(429, 'RATE_LIMITED', 'Too many login attempts; try again in a minute', undefined, { retry_after: 60 });
  }

  async function issueTokens(tx: Tx, user: UserRow, sessionId: string) {
    const refresh = randomToken(32);
    const expiresAt = new Date(Date.now() + config.refreshTokenTtlSeconds * 1000);
    await tx.query('INSERT INTO refresh_token (organization_id, id, session_id, token_hash, expires_at) VALUES ($1,$2,$3,$4,$5)', [
      user.organization_id,
      newId(),
      sessionId,
      sha256Hex(refresh),
      expiresAt,
    ]);
    const access = await signAccessToken(
      config.jwtSecret,
      { sub: user.id, org: user.organization_id, role: user.role, kind: principalOf(user), sid: sessionId },
      config.accessTokenTtlSeconds,
    );
    return {
      access_token: access,
      token_type: 'Bearer' as const,
      expires_in: config.accessTokenTtlSeconds,
      refresh_token: refresh,
      refresh_expires_at: expiresAt,
    };
  }

  async function revokeSession(tx: Tx, organizationId: string, sessionId: string, reason: string) {
    await tx.query('UPDATE auth_session SET revoked_at = now(), revoked_reason = $3 WHERE organization_id = $1 AND id = $2 AND revoked_at IS NULL', [
      organizationId,
      sessionId,
      reason,
    ]);
    await tx.query("SELECT pg_notify('session_revoked', $1)", [sessionId]);
    sessionCache.set(sessionId, { active: false, at: Date.now() + 3_600_000 });
  }

  return {
    insertUser,

    async login(input: { email?: string; phone?: string; password: string; organization_id?: string }, ip: string, userAgent?: string) {
      const identifier = (input.email ?? input.phone ?? '').trim().toLowerCase();
      if (!identifier) throw AppError.badRequest('email or phone is required', [{ field: 'email', message: 'email or phone is required' }]);
      await rateLimit(`login:ip:${ip}`, config.loginRateLimitPerIp);
      await rateLimit(`login:account:${identifier}`, config.loginRateLimitPerAccount);
      const candidates = await db.withSystem(async (tx) => {
        const { rows } = await tx.query<UserRow>(
          `SELECT * FROM users WHERE active AND ${input.email ? 'email = $1' : 'phone = $1'} AND ($2::text IS NULL OR organization_id = $2) LIMIT 3`,
          [identifier, input.organization_id ?? null],
        );
        return rows;
      });
      if (candidates.length > 1) {
        throw AppError.badRequest('This login exists in several organizations; send organization_id', [{ field: 'organization_id', message: 'required for this login' }], 'ORGANIZATION_REQUIRED');
      }
      const user = candidates[0];
      dummyHash ??= hashPassword('dummy-password-0');
      const ok = user ? await argonVerify(user.password_hash, input.password) : (await argonVerify(await dummyHash, input.password), false);
      if (!user || !ok) throw AppError.unauthorized('Wrong login or password', 'INVALID_CREDENTIALS');
      return db.withTenant(tenantOf({ organizationId: user.organization_id, userId: user.id }), async (tx) => {
        const sessionId = newId();
        await tx.query('INSERT INTO auth_session (organization_id, id, user_id, user_agent) VALUES ($1,$2,$3,$4)', [
          user.organization_id,
          sessionId,
          user.id,
          userAgent?.slice(0, 300) ?? null,
        ]);
        return { ...(await issueTokens(tx, user, sessionId)), user: publicUser(user) };
      });
    },

    /** Rotates a refresh token. A token presented twice revokes its whole family (theft detection). */
    async refresh(token: string) {
      const tokenHash = sha256Hex(token);
      const outcome = await db.withSystem(async (tx) => {
        const { rows } = await tx.query<{ organization_id: string; session_id: string; used_at: Date | null; expires_at: Date; revoked_at: Date | null }>(
          `SELECT r.organization_id, r.session_id, r.used_at, r.expires_at, s.revoked_at
             FROM refresh_token r JOIN auth_session s ON s.organization_id = r.organization_id AND s.id = r.session_id
            WHERE r.token_hash = $1 FOR UPDATE OF r`,
          [tokenHash],
        );
        const row = rows[0];
        if (!row) return { error: 'unknown' as const };
        if (row.revoked_at) return { error: 'revoked' as const };
        if (row.used_at) {
          await revokeSession(tx, row.organization_id, row.session_id, 'refresh_token_reuse');
          return { error: 'reused' as const };
        }
        if (row.expires_at.getTime() <= Date.now()) return { error: 'expired' as const };
        await tx.query('UPDATE refresh_token SET used_at = now() WHERE organization_id = $1 AND token_hash = $2', [row.organization_id, tokenHash]);
        const { rows: users } = await tx.query<UserRow>(
          'SELECT u.* FROM users u JOIN auth_session s ON s.organization_id = u.organization_id AND s.user_id = u.id WHERE s.organization_id = $1 AND s.id = $2 AND u.active',
          [row.organization_id, row.session_id],
        );
        if (!users[0]) return { error: 'revoked' as const };
        return { tokens: { ...(await issueTokens(tx, users[0], row.session_id)), user: publicUser(users[0]) } };
      });
      if ('error' in outcome) {
        const msg = outcome.error === 'reused' ? 'Refresh token reuse detected; the session was revoked' : 'The refresh token is invalid, expired or revoked';
        throw AppError.unauthorized(msg, outcome.error === 'reused' ? 'REFRESH_TOKEN_REUSED' : 'INVALID_REFRESH_TOKEN');
      }
      return outcome.tokens;
    },

    async revokeRefreshToken(actor: Actor, token: string) {
      await db.withTenant(tenantOf(actor), async (tx) => {
        const { rows } = await tx.query<{ session_id: string }>(
          `SELECT r.session_id FROM refresh_token r JOIN auth_session s ON s.organization_id = r.organization_id AND s.id = r.session_id
            WHERE r.token_hash = $1 AND s.user_id = $2`,
          [sha256Hex(token), actor.userId],
        );
        if (!rows[0]) throw AppError.notFound('Refresh token');
        await revokeSession(tx, actor.organizationId, rows[0].session_id, 'revoked_by_user');
      });
    },

    async logout(actor: Actor) {
      await db.withTenant(tenantOf(actor), (tx) => revokeSession(tx, actor.organizationId, actor.sessionId, 'logout'));
    },

    /** Session liveness for the auth hook; cached a few seconds, revocations on this instance apply at once. */
    async sessionActive(claims: AccessClaims): Promise<boolean> {
      const hit = sessionCache.get(claims.sid);
      if (hit && (hit.active === false || Date.now() - hit.at < SESSION_CACHE_MS)) return hit.active;
      const active = await db.withSystem(async (tx) => {
        const { rows } = await tx.query(
          `SELECT 1 FROM auth_session s JOIN users u ON u.organization_id = s.organization_id AND u.id = s.user_id
            WHERE s.organization_id = $1 AND s.id = $2 AND s.revoked_at IS NULL AND u.active`,
          [claims.org, claims.sid],
        );
        return rows.length > 0;
      });
      if (sessionCache.size > 100_000) sessionCache.clear();
      sessionCache.set(claims.sid, { active, at: Date.now() });
      return active;
    },

    async me(actor: Actor) {
      const rows = await db.tenantRead<Omit<UserRow, 'password_hash'> & { organization_name: string }>(
        tenantOf(actor),
        `SELECT ${USER_COLUMNS.split(', ').map((c) => `u.${c}`).join(', ')}, o.name AS organization_name
           FROM users u JOIN organization o ON o.id = u.organization_id WHERE u.id = $1`,
        [actor.userId],
      );
      if (!rows[0]) throw AppError.notFound('User');
      return { ...publicUser(rows[0]), organization: { id: rows[0].organization_id, name: rows[0].organization_name }, subadmin_scope: actor.subadmin };
    },

    async createAppUser(actor: Actor, input: NewUser) {
      return db.withTenant(tenantOf(actor), async (tx) => {
        const user = await insertUser(tx, actor.organizationId, { ...input, platform_admin: false });
        await recordAudit(tx, actor, { action: 'user.created', entityType: 'user', entityId: user.id, after: publicUser(user) });
        return publicUser(user);
      });
    },

    async listAppUsers(actor: Actor, q: { role?: AppRole; limit?: number; cursor?: string; q?: string }) {
      const page = pageRequest(q);
      return db.withTenant(tenantOf(actor), async (tx) => {
        const { rows } = await tx.query<UserRow>(
          `SELECT ${USER_COLUMNS} FROM users
            WHERE ($1::text IS NULL OR role = $1) AND ($2::text IS NULL OR id < $2)
              AND ($3::text IS NULL OR email ILIKE '%' || $3 || '%' OR display_name ILIKE '%' || $3 || '%')
            ORDER BY id DESC LIMIT $4`,
          [q.role ?? null, page.after, q.q ?? null, page.limit + 1],
        );
        return toPage(rows, page, publicUser);
      });
    },

    /** For other modules: the users of a role in the caller's organization (e.g. to notify administrators). */
    async userIdsByKind(tx: Tx, kinds: Principal[]): Promise<string[]> {
      const { rows } = await tx.query<UserRow>('SELECT id, role, dispatch, subadmin, platform_admin FROM users WHERE active');
      return rows.filter((u) => kinds.includes(principalOf(u))).map((u) => u.id);
    },

    async userExists(tx: Tx, userId: string, role?: AppRole): Promise<boolean> {
      const { rowCount } = await tx.query('SELECT 1 FROM users WHERE id = $1 AND ($2::text IS NULL OR role = $2)', [userId, role ?? null]);
      return rowCount > 0;
    },
  };
}

export type IdentityService = ReturnType<typeof createIdentityService>;
