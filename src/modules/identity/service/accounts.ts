import { normalizePhones, phoneCandidates } from '../../../platform/phone.js';
import { containsPattern } from '../../../platform/search.js';
import { createHmac } from 'node:crypto';
import { hash as argonHash, verify as argonVerify } from '@node-rs/argon2';
import { AppError } from '../../../platform/errors.js';
import { newId, randomToken, sha256Hex } from '../../../platform/ids.js';
import { signAccessToken, type AccessClaims, type Actor, type AppRole, type Principal } from '../../../platform/auth.js';
import { recordAudit } from '../../../platform/audit.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import type { Tx } from '../../../platform/db/index.js';
import type { IdentityContext } from '../context.js';
import * as repo from '../repo.js';
import type { UserRow, UserView } from '../repo.js';
import type { PublicUser } from '../schemas.js';
import { passwordProblems } from './passwords.js';
import { createCache, invalidateOn } from '../../../platform/cache.js';

export function principalOf(u: Pick<UserRow, 'role' | 'dispatch' | 'subadmin' | 'platform_admin'>): Principal {
  if (u.platform_admin) return 'platform';
  if (u.role === 'administrator') return u.subadmin ? 'subadmin' : u.dispatch ? 'dispatch' : 'administrator';
  return u.role;
}

export function publicUser(u: UserView): PublicUser {
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

/**
 * How long a live session is taken as live without reading it again: longer than the GPS batch interval of a driver's
 * app (5–30 s), so a driver's requests do not each open a transaction for it (a third of a city's transactions did).
 */
export const SESSION_RECHECK_MS = 60_000;

export function createIdentityService(ctx: IdentityContext) {
  const { db, config } = ctx;
  const argon = {
    memoryCost: config.settings.PASSWORD_HASH_MEMORY_KIB,
    timeCost: config.settings.PASSWORD_HASH_ITERATIONS,
    parallelism: 1,
  };
  const hashPassword = (password: string) => argonHash(password, argon);
  // A valid hash to verify against when the account does not exist, so timing does not reveal accounts.
  let dummyHash: Promise<string> | null = null;
  // Session liveness per session id: a live session is re-read after SESSION_RECHECK_MS, a dead one never lives again.
  // Every revocation (logout, refresh-token reuse, deactivation) is announced on 'session_revoked' to every instance,
  // and a lost listening connection empties the cache: the re-read only covers what no announcement could.
  const sessionCache = createCache<string, boolean>({ ttlMs: (active) => (active ? SESSION_RECHECK_MS : Infinity), maxEntries: 100_000 });
  invalidateOn(ctx, 'session_revoked', sessionCache, (sid, c) => c.set(sid, false));

  let countriesCache: { at: number; list: string[] } | null = null;
  /** The default countries organizations use (a handful), cached for a minute. */
  async function phoneCountriesInUse(): Promise<string[]> {
    if (countriesCache && Date.now() - countriesCache.at < 60_000) return countriesCache.list;
    const list = await db.withSystem((tx) => ctx.deps.organizations.phoneCountriesInUse(tx));
    countriesCache = { at: Date.now(), list };
    return list;
  }

  async function insertUser(tx: Tx, organizationId: string, input: NewUser): Promise<UserRow> {
    const problem = passwordProblems(input.password, input.email);
    if (problem) throw AppError.badRequest(`password ${problem}`, [{ field: 'password', message: problem }], 'WEAK_PASSWORD');
    if (!input.email && !input.phone)
      throw AppError.badRequest('email or phone is required', [{ field: 'email', message: 'email or phone is required' }]);
    // Stored in E.164 (the organization's default country for national numbers): one form to find and match.
    input = await normalizePhones(tx, organizationId, input, ['phone']);
    const email = input.email ? input.email.trim().toLowerCase() : null;
    if (await repo.loginTaken(tx, organizationId, email, input.phone ?? null))
      throw AppError.conflict('A user with this email or phone already exists in the organization', 'DUPLICATE_USER');
    return repo.insertUser(tx, {
      organization_id: organizationId,
      id: newId(),
      email,
      phone: input.phone ?? null,
      password_hash: await hashPassword(input.password),
      display_name: input.display_name,
      role: input.role,
      dispatch: input.dispatch ?? false,
      subadmin: input.subadmin ?? false,
      platform_admin: input.platform_admin ?? false,
    });
  }

  /**
   * Sliding-window counter in PostgreSQL, shared by every API instance: this window plus the weighted
   * previous one. Over the limit: 429 RATE_LIMITED with Retry-After (the end of the current window).
   */
  async function rateLimit(key: string, limit: number, windowSeconds = 60, what = 'attempts'): Promise<void> {
    const { weighted, retryAfter } = await db.withSystem(async (tx) => {
      const row = await repo.countRateLimited(tx, key, windowSeconds);
      if (Math.random() < 0.01) await repo.pruneRateLimitBuckets(tx);
      return { weighted: Number(row.weighted), retryAfter: Math.max(1, Number(row.retry_after)) };
    });
    if (weighted > limit) {
      throw new AppError(429, 'RATE_LIMITED', `Too many ${what}; try again in ${retryAfter} s`, undefined, { retry_after: retryAfter });
    }
  }

  const throttled = (seconds: number) =>
    new AppError(429, 'LOGIN_THROTTLED', `Too many failed logins; try again in ${seconds} s`, undefined, {
      retry_after: Math.max(1, seconds),
    });

  /**
   * Admits one login attempt or answers 429 LOGIN_THROTTLED, before any password is checked.
   * Every attempt counts as a failure of its account-and-address pair until it succeeds (so parallel
   * guesses cannot slip past the back-off): `freeAttempts` attempts, then the pair waits
   * `baseDelaySeconds` doubled per further attempt, up to `maxDelaySeconds`. When the account collected
   * `accountCeiling` failures within `accountWindowSeconds` from all addresses, addresses that never
   * logged in to it share one attempt per `unknownAddressIntervalSeconds`; known-good addresses (a
   * successful login within `knownAddressDays`) are not held back, so the owner is not locked out.
   * Rows are keyed by the submitted login, whether or not an account has it.
   */
  async function admitLoginAttempt(login: string, address: string): Promise<void> {
    const t = config.loginThrottle;
    const pairKey = `pair:${login}|${address}`;
    const accountKey = `account:${login}`;
    await db.withSystem(async (tx) => {
      // Both rows locked in key order ('account:' < 'pair:'), so concurrent attempts queue instead of deadlocking.
      const rows = await repo.lockThrottle(tx, { accountKey, pairKey, login, address }, t);
      const account = rows.find((r) => r.key === accountKey)!;
      const pair = rows.find((r) => r.key === pairKey)!;
      if (pair.wait) throw throttled(pair.wait);
      if (!account.stale && account.failures >= t.accountCeiling && !account.known) {
        if (account.wait) throw throttled(account.wait);
        await repo.blockThrottleKey(tx, accountKey, t.unknownAddressIntervalSeconds);
      }
      const attempts = (pair.stale ? 0 : pair.failures) + 1;
      const delay = attempts < t.freeAttempts ? 0 : Math.min(t.baseDelaySeconds * 2 ** (attempts - t.freeAttempts), t.maxDelaySeconds);
      await repo.setPairAttempts(tx, pairKey, attempts, pair.stale, delay);
      if (Math.random() < 0.01) await repo.pruneLoginThrottle(tx, t.knownAddressDays);
    });
  }

  /** A wrong password: one more failure for the account (the pair was counted on admission). */
  async function loginFailed(login: string): Promise<void> {
    await db.withSystem((tx) => repo.countAccountFailure(tx, `account:${login}`, config.loginThrottle.accountWindowSeconds));
  }

  /** A right password: the pair starts over and the address becomes known-good for the login. */
  async function loginSucceeded(login: string, address: string): Promise<void> {
    await db.withSystem((tx) => repo.clearPairAndRememberAddress(tx, `pair:${login}|${address}`, login, address));
  }

  /**
   * The refresh token that replaces `token`: derived (HMAC with the server secret), so the same token
   * presented again within the grace window yields the same successor without storing it in clear.
   */
  const successorOf = (token: string) =>
    createHmac('sha256', config.keys.refreshSuccessor).update(`refresh-successor:${token}`).digest('base64url');

  /**
   * A token pair. `refresh` and `issuedAt` are given when rotating (the successor of the presented
   * token, at the rotation time) and the row is inserted only once (`insert` false on a grace repeat).
   */
  async function issueTokens(tx: Tx, user: UserRow, sessionId: string, rotation?: { refresh: string; issuedAt: Date; insert: boolean }) {
    const refresh = rotation?.refresh ?? randomToken(32);
    const issuedAt = rotation?.issuedAt ?? new Date();
    const expiresAt = new Date(Math.floor(issuedAt.getTime() / 1000) * 1000 + config.refreshTokenTtlSeconds * 1000);
    if (rotation?.insert !== false) {
      await repo.insertRefreshToken(tx, user.organization_id, newId(), sessionId, sha256Hex(refresh), expiresAt);
    }
    const access = await signAccessToken(
      config.keys.accessToken,
      { sub: user.id, org: user.organization_id, role: user.role, kind: principalOf(user), sid: sessionId },
      config.accessTokenTtlSeconds,
      issuedAt,
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
    await repo.revokeSession(tx, organizationId, sessionId, reason);
    sessionCache.set(sessionId, false);
  }

  return {
    insertUser,
    rateLimit,

    /**
     * Email or phone and password. The same login may belong to accounts of several organizations
     * (onboarding never touches an existing account): the password decides. One matching account logs
     * in; several answer 400 ORGANIZATION_REQUIRED with their organizations, only after the password
     * was verified; none (or no such login) answer 401 INVALID_CREDENTIALS alike.
     */
    async login(input: { email?: string; phone?: string; password: string; organization_id?: string }, ip: string, userAgent?: string) {
      // A phone is stored in E.164: the typed one is matched in that form under each organization's default country.
      const phones = input.email || !input.phone ? [] : phoneCandidates(input.phone, await phoneCountriesInUse());
      const identifier = (input.email ?? [...phones].sort().find((p) => p.startsWith('+')) ?? input.phone ?? '').trim().toLowerCase();
      if (!identifier) throw AppError.badRequest('email or phone is required', [{ field: 'email', message: 'email or phone is required' }]);
      await rateLimit(`login:ip:${ip}`, config.loginRateLimitPerIp, 60, 'login attempts from this address');
      await admitLoginAttempt(identifier, ip);
      const candidates = await db.withSystem((tx) =>
        repo.loginCandidates(tx, input.email ? { email: identifier } : { phones }, input.organization_id ?? null),
      );
      dummyHash ??= hashPassword('dummy-password-0');
      const matches: typeof candidates = [];
      if (candidates.length === 0) await argonVerify(await dummyHash, input.password);
      for (const candidate of candidates) if (await argonVerify(candidate.password_hash, input.password)) matches.push(candidate);
      if (matches.length === 0) {
        await loginFailed(identifier);
        throw AppError.unauthorized('Wrong login or password', 'INVALID_CREDENTIALS');
      }
      await loginSucceeded(identifier, ip);
      if (matches.length > 1) {
        const names = await db.withSystem((tx) =>
          ctx.deps.organizations.organizationNames(
            tx,
            matches.map((m) => m.organization_id),
          ),
        );
        throw new AppError(
          400,
          'ORGANIZATION_REQUIRED',
          'This login and password belong to accounts in several organizations; send organization_id',
          [{ field: 'organization_id', message: 'required for this login' }],
          { organizations: matches.map((m) => ({ id: m.organization_id, name: names.get(m.organization_id) ?? '' })) },
        );
      }
      const user = matches[0];
      return db.withTenant({ organizationId: user.organization_id, userId: user.id }, async (tx) => {
        const sessionId = newId();
        await repo.insertSession(tx, user.organization_id, sessionId, user.id, userAgent?.slice(0, 300) ?? null);
        return { ...(await issueTokens(tx, user, sessionId)), user: publicUser(user) };
      });
    },

    /**
     * Rotates a refresh token. Presented again within `refreshReuseGraceSeconds` of its rotation (two
     * requests racing, a retried response lost on the network) it returns the same new pair; later,
     * or once its successor was itself used, the reuse is taken for theft and revokes the whole family.
     */
    async refresh(token: string) {
      const tokenHash = sha256Hex(token);
      const successor = successorOf(token);
      const outcome = await db.withSystem(async (tx) => {
        const row = await repo.lockRefreshToken(tx, tokenHash, config.refreshReuseGraceSeconds);
        if (!row) return { error: 'unknown' as const };
        if (row.revoked_at) return { error: 'revoked' as const };
        let rotation: { refresh: string; issuedAt: Date; insert: boolean };
        if (row.used_at) {
          const next = await repo.refreshTokenUse(tx, row.organization_id, sha256Hex(successor));
          if (!row.in_grace || !next || next.used_at) {
            await revokeSession(tx, row.organization_id, row.session_id, 'refresh_token_reuse');
            return { error: 'reused' as const };
          }
          rotation = { refresh: successor, issuedAt: row.used_at, insert: false };
        } else {
          if (row.expires_at.getTime() <= Date.now()) return { error: 'expired' as const };
          rotation = { refresh: successor, issuedAt: await repo.markRefreshTokenUsed(tx, row.organization_id, tokenHash), insert: true };
        }
        const user = await repo.sessionUser(tx, row.organization_id, row.session_id);
        if (!user) return { error: 'revoked' as const };
        return { tokens: { ...(await issueTokens(tx, user, row.session_id, rotation)), user: publicUser(user) } };
      });
      if ('error' in outcome) {
        const msg =
          outcome.error === 'reused'
            ? 'Refresh token reuse detected; the session was revoked'
            : 'The refresh token is invalid, expired or revoked';
        throw AppError.unauthorized(msg, outcome.error === 'reused' ? 'REFRESH_TOKEN_REUSED' : 'INVALID_REFRESH_TOKEN');
      }
      return outcome.tokens;
    },

    async revokeRefreshToken(actor: Actor, token: string) {
      await db.withTenant(actor, async (tx) => {
        const sessionId = await repo.sessionOfRefreshToken(tx, sha256Hex(token), actor.userId);
        if (!sessionId) throw AppError.notFound('Refresh token');
        await revokeSession(tx, actor.organizationId, sessionId, 'revoked_by_user');
      });
    },

    /** Revokes every live session of a user (their refresh tokens die with them; open streams close on the NOTIFY). */
    async revokeUserSessions(tx: Tx, organizationId: string, userId: string, reason: string): Promise<number> {
      const ids = await repo.liveSessionIds(tx, organizationId, userId);
      for (const id of ids) await revokeSession(tx, organizationId, id, reason);
      return ids.length;
    },

    async logout(actor: Actor) {
      await db.withTenant(actor, (tx) => revokeSession(tx, actor.organizationId, actor.sessionId, 'logout'));
    },

    /**
     * Session liveness for the auth hook: cached SESSION_RECHECK_MS, a revocation (on any instance) applies at once.
     * The organization comes from the verified token: checked under its RLS, not across tenants. One statement, read
     * without a transaction of its own, on the primary (a read without a user is never sent to a replica, which could
     * still show a revoked session live).
     */
    async sessionActive(claims: AccessClaims): Promise<boolean> {
      return sessionCache.get(claims.sid, () =>
        db.readTenant({ organizationId: claims.org, userId: null }, (tx) => repo.sessionLive(tx, claims.org, claims.sid)),
      );
    },

    async me(actor: Actor) {
      const me = await repo.readMe(db, actor, actor.userId);
      if (!me) throw AppError.notFound('User');
      return {
        ...publicUser(me),
        organization: { id: me.organization_id, name: me.organization_name ?? '' },
        subadmin_scope: subadminScopeOut(actor.subadmin),
      };
    },

    async createAppUser(actor: Actor, input: NewUser) {
      return db.withTenant(actor, async (tx) => {
        const user = await insertUser(tx, actor.organizationId, { ...input, platform_admin: false });
        await recordAudit(tx, actor, { action: 'user.created', entityType: 'user', entityId: user.id, after: publicUser(user) });
        return publicUser(user);
      });
    },

    async listAppUsers(actor: Actor, q: { role?: AppRole; limit?: number; cursor?: string; q?: string }) {
      const page = pageRequest(q);
      return db.withTenant(actor, async (tx) => {
        const rows = await repo.listUsers(tx, {
          role: q.role ?? null,
          after: page.after,
          pattern: q.q ? containsPattern(q.q) : null,
          limit: page.limit + 1,
        });
        return toPage(rows, page, publicUser);
      });
    },

    /** For other modules: the users of a role in the caller's organization (e.g. to notify administrators). */
    async userIdsByKind(tx: Tx, kinds: Principal[]): Promise<string[]> {
      return (await repo.activeUserRoles(tx)).filter((u) => kinds.includes(principalOf(u))).map((u) => u.id);
    },

    /** For other modules (recipient messages: the preference of a customer's phone): a user's phone, or null. */
    userPhone: (tx: Tx, userId: string): Promise<string | null> => repo.userPhone(tx, userId),

    /** For other modules (realtime: open streams end with their session): of these sessions, the live ones, as `organization:session`. */
    aliveSessions: (tx: Tx, sessionIds: string[]): Promise<Set<string>> => repo.aliveSessions(tx, sessionIds),

    /** For other modules (the dashboard): active users per role in the caller's organization. */
    activeUsersByRole: (tx: Tx): Promise<Record<string, number>> => repo.activeUsersByRole(tx),

    /** For other modules (API keys: a key acts as its owner now): a user's principal and whether he is active, or null. */
    async principalOfUser(tx: Tx, userId: string): Promise<{ kind: Principal; role: AppRole; active: boolean } | null> {
      const u = await repo.findUser(tx, userId);
      return u ? { kind: principalOf(u), role: u.role, active: u.active } : null;
    },

    async userExists(tx: Tx, userId: string, role?: AppRole): Promise<boolean> {
      return repo.userExists(tx, userId, role ?? null);
    },
  };
}

export type IdentityService = ReturnType<typeof createIdentityService>;

/** The sub-administrator's scope as the API shows it (snake_case like every other field). */
export function subadminScopeOut(scope: Actor['subadmin']) {
  return scope
    ? {
        territory_ids: scope.territoryIds,
        permissions: scope.permissions,
        commission_min_percent: scope.commissionMinPercent,
        commission_max_percent: scope.commissionMaxPercent,
        active: scope.active,
      }
    : null;
}
