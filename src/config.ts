import { randomBytes } from 'node:crypto';
import path from 'node:path';

/** Every setting the service reads, validated once at start. `.env.example` lists them. */
export interface Config {
  env: 'development' | 'production' | 'test';
  port: number;
  host: string;
  databaseUrl: string | null;
  /** The schema owner's connection, used only to migrate; `databaseUrl` (the run-time role) when unset. */
  databaseMigrationUrl: string | null;
  /** Optional second login for the cross-tenant system transactions; `databaseUrl` when unset. */
  databaseSystemUrl: string | null;
  dataDir: string;
  jwtSecret: Uint8Array;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  corsOrigins: string[];
  metricsToken: string | null;
  logLevel: string;
  bodyLimitBytes: number;
  seedDemo: boolean;
  workers: boolean;
  /** Login attempts per client address per minute, all accounts together (sliding window). */
  loginRateLimitPerIp: number;
  /** Where people reach the service (links sent to recipients); no trailing slash. Empty: links are relative paths. */
  publicBaseUrl: string;
  /** Guessing throttle: per account-and-address back-off and a per-account ceiling (see README, Authentication). */
  loginThrottle: LoginThrottle;
  /** `POST /onboarding` per client address and per email, per hour. */
  onboardingRateLimitPerIp: number;
  onboardingRateLimitPerEmail: number;
  /** Seconds during which a rotated refresh token presented again returns the same new pair. */
  refreshReuseGraceSeconds: number;
  /**
   * Which proxies may set X-Forwarded-For: false (default: none, the socket address is the client),
   * a hop count, or a list of addresses / CIDRs (`TRUST_PROXY`).
   */
  trustProxy: false | number | string[];
  /** Free-form settings for modules (storage driver, gateways...), read through `env()`. */
  raw: Record<string, string | undefined>;
}

export interface LoginThrottle {
  /** Failed attempts per account and address before the back-off starts. */
  freeAttempts: number;
  /** Back-off after the first throttled attempt, doubled on each further failure, up to maxDelaySeconds. */
  baseDelaySeconds: number;
  maxDelaySeconds: number;
  /** Failures of one account (from every address) within accountWindowSeconds that put it under the ceiling. */
  accountCeiling: number;
  accountWindowSeconds: number;
  /** Under the ceiling, addresses that never logged in to the account share one attempt per this many seconds. */
  unknownAddressIntervalSeconds: number;
  /** A successful login makes the address known-good for the account for this many days. */
  knownAddressDays: number;
}

export const DEFAULT_LOGIN_THROTTLE: LoginThrottle = {
  freeAttempts: 5,
  baseDelaySeconds: 1,
  maxDelaySeconds: 900,
  accountCeiling: 20,
  accountWindowSeconds: 900,
  unknownAddressIntervalSeconds: 30,
  knownAddressDays: 30,
};

const IPV4 = /^(\d{1,3})(\.\d{1,3}){3}$/;

/** `TRUST_PROXY`: empty/false = trust no proxy; an integer = that many hops; else a comma list of addresses or CIDRs. */
export function parseTrustProxy(value: string | undefined): false | number | string[] {
  const v = (value ?? '').trim();
  if (v === '' || ['false', '0', 'no', 'off'].includes(v.toLowerCase())) return false;
  if (/^\d+$/.test(v)) return Number(v);
  const entries = v.split(',').map((s) => s.trim()).filter(Boolean);
  for (const e of entries) {
    if (['loopback', 'linklocal', 'uniquelocal'].includes(e)) continue;
    const [addr, bits, ...rest] = e.split('/');
    const v4 = IPV4.test(addr) && addr.split('.').every((o) => Number(o) <= 255);
    const v6 = !v4 && addr.includes(':') && /^[0-9a-fA-F:.]+$/.test(addr);
    const max = v4 ? 32 : 128;
    const bitsOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= max);
    if ((!v4 && !v6) || !bitsOk || rest.length) {
      throw new Error(`config: TRUST_PROXY must be a hop count or a comma list of addresses/CIDRs, got "${e}"`);
    }
  }
  return entries;
}

function int(name: string, value: string | undefined, fallback: number, min = 0): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new Error(`config: ${name} must be an integer >= ${min}, got "${value}"`);
  return n;
}

function bool(value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  return ['1', 'true', 'yes', 'on'].includes(value.toLowerCase());
}

export function loadConfig(source: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  const env = (source.NODE_ENV === 'production' ? 'production' : source.NODE_ENV === 'test' ? 'test' : 'development') as Config['env'];
  const secret = source.JWT_SECRET;
  const databaseUrl = source.DATABASE_URL || null;
  // Several instances share one PostgreSQL: each must verify the others' tokens, so the secret cannot be invented per process.
  if ((env === 'production' || databaseUrl) && (!secret || secret.length < 32)) {
    throw new Error('config: JWT_SECRET (at least 32 characters) is required with DATABASE_URL or in production');
  }
  if (secret && secret.length < 32) throw new Error('config: JWT_SECRET must be at least 32 characters');
  for (const name of ['DATABASE_MIGRATION_URL', 'DATABASE_SYSTEM_URL']) {
    if (source[name] && !source.DATABASE_URL) throw new Error(`config: ${name} goes with a PostgreSQL DATABASE_URL; set DATABASE_URL too`);
  }
  const t = DEFAULT_LOGIN_THROTTLE;
  const config: Config = {
    env,
    port: int('PORT', source.PORT, 3000, 0),
    host: source.HOST || '0.0.0.0',
    databaseUrl,
    databaseMigrationUrl: source.DATABASE_MIGRATION_URL || null,
    databaseSystemUrl: source.DATABASE_SYSTEM_URL || null,
    dataDir: path.resolve(source.DATA_DIR || './data'),
    // A random secret per process in development: tokens do not survive a restart, which is fine locally.
    jwtSecret: new TextEncoder().encode(secret || randomBytes(32).toString('hex')),
    accessTokenTtlSeconds: int('ACCESS_TOKEN_TTL_SECONDS', source.ACCESS_TOKEN_TTL_SECONDS, 900, 10),
    refreshTokenTtlSeconds: int('REFRESH_TOKEN_TTL_SECONDS', source.REFRESH_TOKEN_TTL_SECONDS, 30 * 24 * 3600, 60),
    corsOrigins: (source.CORS_ORIGINS || '').split(',').map((s) => s.trim()).filter(Boolean),
    metricsToken: source.METRICS_TOKEN || null,
    logLevel: source.LOG_LEVEL || (env === 'test' ? 'silent' : 'info'),
    bodyLimitBytes: int('BODY_LIMIT_BYTES', source.BODY_LIMIT_BYTES, 1024 * 1024, 1024),
    // The demo organization has a published password: seeded by default only on the embedded database.
    seedDemo: bool(source.SEED_DEMO, !databaseUrl),
    workers: bool(source.WORKERS, true),
    loginRateLimitPerIp: int('LOGIN_RATE_LIMIT_PER_IP', source.LOGIN_RATE_LIMIT_PER_IP, 50, 1),
    publicBaseUrl: (source.PUBLIC_BASE_URL || '').replace(/\/+$/, ''),
    loginThrottle: {
      ...t,
      freeAttempts: int('LOGIN_FREE_ATTEMPTS', source.LOGIN_FREE_ATTEMPTS, t.freeAttempts, 1),
      maxDelaySeconds: int('LOGIN_MAX_DELAY_SECONDS', source.LOGIN_MAX_DELAY_SECONDS, t.maxDelaySeconds, 1),
      accountCeiling: int('LOGIN_ACCOUNT_CEILING', source.LOGIN_ACCOUNT_CEILING, t.accountCeiling, 1),
    },
    onboardingRateLimitPerIp: int('ONBOARDING_RATE_LIMIT_PER_IP', source.ONBOARDING_RATE_LIMIT_PER_IP, 10, 1),
    onboardingRateLimitPerEmail: int('ONBOARDING_RATE_LIMIT_PER_EMAIL', source.ONBOARDING_RATE_LIMIT_PER_EMAIL, 3, 1),
    refreshReuseGraceSeconds: int('REFRESH_REUSE_GRACE_SECONDS', source.REFRESH_REUSE_GRACE_SECONDS, 10, 0),
    trustProxy: parseTrustProxy(source.TRUST_PROXY),
    raw: { ...source },
    ...overrides,
  };
  return config;
}
