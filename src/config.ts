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
  loginRateLimitPerAccount: number;
  loginRateLimitPerIp: number;
  /** Free-form settings for modules (storage driver, gateways...), read through `env()`. */
  raw: Record<string, string | undefined>;
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
  if (env === 'production' && (!secret || secret.length < 32)) {
    throw new Error('config: JWT_SECRET (at least 32 characters) is required in production');
  }
  for (const name of ['DATABASE_MIGRATION_URL', 'DATABASE_SYSTEM_URL']) {
    if (source[name] && !source.DATABASE_URL) throw new Error(`config: ${name} goes with a PostgreSQL DATABASE_URL; set DATABASE_URL too`);
  }
  const config: Config = {
    env,
    port: int('PORT', source.PORT, 3000, 0),
    host: source.HOST || '0.0.0.0',
    databaseUrl: source.DATABASE_URL || null,
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
    seedDemo: bool(source.SEED_DEMO, true),
    workers: bool(source.WORKERS, true),
    loginRateLimitPerAccount: int('LOGIN_RATE_LIMIT_PER_ACCOUNT', source.LOGIN_RATE_LIMIT_PER_ACCOUNT, 10, 1),
    loginRateLimitPerIp: int('LOGIN_RATE_LIMIT_PER_IP', source.LOGIN_RATE_LIMIT_PER_IP, 50, 1),
    raw: { ...source },
    ...overrides,
  };
  return config;
}
