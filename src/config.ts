import { randomBytes } from 'node:crypto';
import { deriveKeys, MIN_SECRET_LENGTH, type SigningKeys } from './platform/keys.js';
import { keyring, parseSecretsKey, type SecretsKeyring } from './platform/secrets.js';
import path from 'node:path';
import { Type, type Static, type TSchema } from '@sinclair/typebox';

/**
 * The settings the modules read (environment variables), each named, typed, defaulted and documented here, and
 * validated once by `loadConfig`: a bad value stops the start with `config: NAME must be ...`. Integers and
 * booleans are read from their text (`1/true/yes/on`, `0/false/no/off`); an empty value means unset.
 */
const int = (dflt: number, minimum: number, description: string, maximum?: number) =>
  Type.Integer({ default: dflt, minimum, ...(maximum !== undefined ? { maximum } : {}), description });
const flag = (dflt: boolean, description: string) => Type.Boolean({ default: dflt, description });
const text = (description: string) => Type.Optional(Type.String({ description }));
const MiB = 1024 * 1024;

export const Settings = Type.Object({
  // HTTP edge (src/platform/edge.ts)
  HTTP_REQUEST_TIMEOUT_MS: int(120_000, 100, 'Whole request (headers and body) deadline; beyond it 408'),
  HTTP_HEADERS_TIMEOUT_MS: int(10_000, 100, 'Request headers deadline (at most HTTP_REQUEST_TIMEOUT_MS)'),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: int(72_000, 100, 'Idle keep-alive connections are closed after this'),
  HTTP_IDLE_TIMEOUT_MS: int(120_000, 1_000, 'A socket with no traffic either way for this long is closed'),
  HTTP_TIMEOUT_CHECK_MS: int(1_000, 10, 'How often the two timeouts above are checked'),
  HTTP_MAX_HEADER_BYTES: int(16 * 1024, 1024, 'Largest request head in bytes; beyond it 431'),
  // Expensive routes, per user per minute, shared by every instance (src/platform/rate-limit.ts); 0 = no limit
  RATE_LIMIT_ORDERS_PER_MINUTE: int(60, 0, 'Order creations per user per minute (0 = no limit)'),
  RATE_LIMIT_PLANS_PER_MINUTE: int(20, 0, 'Dispatch plans per user per minute (0 = no limit)'),
  RATE_LIMIT_REPORTS_PER_MINUTE: int(20, 0, 'Report downloads per user per minute (0 = no limit)'),
  // Password hashing (src/modules/identity): Argon2id, OWASP's 19 MiB / 2 iterations by default. Each login verifies
  // with the parameters stored in the hash, so a change applies to passwords set from then on.
  PASSWORD_HASH_MEMORY_KIB: int(
    19_456,
    1_024,
    'Argon2id memory per hash in KiB (keep the default in production; the test suite lowers it)',
  ),
  PASSWORD_HASH_ITERATIONS: int(2, 1, 'Argon2id passes per hash'),
  // PostgreSQL pool (src/platform/db)
  DB_POOL_MAX: int(20, 1, 'Connections per instance'),
  DB_CONNECT_TIMEOUT_MS: int(5_000, 100, 'The longest wait for a connection before answering 503'),
  REPLICA_MAX_LAG_MS: int(
    2_000,
    0,
    'With DATABASE_REPLICA_URL: a replica further behind the primary than this serves no read (they go to the primary)',
  ),
  DB_PREPARED_STATEMENTS: flag(
    true,
    'Run the hot statements as named prepared statements (off behind a transaction-mode pooler that does not track them, e.g. PgBouncer before 1.21)',
  ),
  // Storage (src/modules/storage)
  STORAGE_DRIVER: Type.Union([Type.Literal('local'), Type.Literal('s3')], {
    default: 'local',
    description: 'Where new uploads go: local disk under DATA_DIR, or S3',
  }),
  MULTI_INSTANCE: flag(false, 'Several instances behind a load balancer: the local storage driver then refuses to start'),
  STORAGE_QUOTA_BYTES_PER_ORGANIZATION: int(10 * 1024 ** 3, 0, 'Bytes one organization may store (objects and open uploads); 0 = no quota'),
  STORAGE_MAX_BYTES_PICKUP_EVIDENCE: int(15 * MiB, 1, 'Largest pickup evidence upload', 1024 * MiB),
  STORAGE_MAX_BYTES_DELIVERY_EVIDENCE: int(15 * MiB, 1, 'Largest delivery evidence upload', 1024 * MiB),
  STORAGE_MAX_BYTES_DOCUMENT: int(20 * MiB, 1, 'Largest document upload', 1024 * MiB),
  STORAGE_MAX_BYTES_AVATAR: int(5 * MiB, 1, 'Largest avatar upload', 1024 * MiB),
  STORAGE_MAX_BYTES_MERCHANT_PAYMENT_QR: int(5 * MiB, 1, 'Largest payment QR upload', 1024 * MiB),
  STORAGE_MAX_BYTES_PAYMENT_PROOF: int(10 * MiB, 1, 'Largest payment proof upload', 1024 * MiB),
  STORAGE_MAX_BYTES_COUPON_ASSET: int(5 * MiB, 1, 'Largest coupon or banner image upload', 1024 * MiB),
  STORAGE_MAX_BYTES_OTHER: int(10 * MiB, 1, 'Largest upload of purpose other', 1024 * MiB),
  S3_BUCKET: text('Bucket (required with STORAGE_DRIVER=s3)'),
  S3_REGION: Type.String({ default: 'us-east-1', description: 'S3 region' }),
  S3_ENDPOINT: text('S3-compatible endpoint (MinIO...); AWS when unset'),
  S3_FORCE_PATH_STYLE: flag(false, 'Path-style bucket addressing (MinIO)'),
  S3_ACCESS_KEY_ID: text('S3 credentials; the AWS default chain when unset'),
  S3_SECRET_ACCESS_KEY: text('S3 credentials; the AWS default chain when unset'),
  S3_KEY_PREFIX: Type.String({ default: 'objects/', description: 'Prefix of object keys' }),
  // Realtime (src/modules/realtime)
  REALTIME_HEARTBEAT_MS: int(15_000, 1, 'SSE heartbeat comment period'),
  REALTIME_MAX_BUFFER_BYTES: int(512 * 1024, 1, 'A stream whose client does not read this much is closed'),
  REALTIME_MAX_PARKED: int(5_000, 1, 'Events held back while waiting for a sequence gap'),
  REALTIME_GAP_TIMEOUT_MS: int(500, 1, 'How long a sequence gap is waited for'),
  REALTIME_MAX_CONNECTIONS: int(20_000, 1, 'Open SSE streams per instance'),
  REALTIME_REPLAY_MAX: int(10_000, 1, 'Missed events replayed on resume before a stream.reset'),
  REALTIME_MAX_STREAMS_PER_USER: int(8, 1, 'Open SSE streams per user on one instance (one more is 429)'),
  REALTIME_SESSION_CHECK_MS: int(5_000, 1, 'How often open streams re-check their session'),
  // Push (src/modules/notifications)
  PUSH_WEBHOOK_URL: text('Push gateway webhook; pushes wait as pending when unset'),
  PUSH_WEBHOOK_SECRET: text('HMAC secret of the push webhook (at least 16 characters, required with PUSH_WEBHOOK_URL)'),
  PUSH_WEBHOOK_TIMEOUT_MS: Type.Optional(int(10_000, 1, 'Push webhook request timeout')),
  PUSH_BATCH_SIZE: int(50, 1, 'Push outbox rows claimed per round'),
  PUSH_MAX_ATTEMPTS: int(6, 1, 'Attempts before a push is failed'),
  PUSH_BACKOFF_MS: int(5_000, 1, 'First retry delay, doubled per attempt'),
  PUSH_CLAIM_TIMEOUT_MS: int(120_000, 1, 'A claimed push not finished within this is claimed again'),
  PUSH_WORKER_INTERVAL_MS: int(1_000, 1, 'Push worker period'),
  // Chat outbox (src/modules/chat)
  CHAT_CLOUD_API_URL: text('Base URL of the chat cloud API; cloud_api rows wait when unset'),
  CHAT_SEND_TIMEOUT_MS: int(10_000, 1, 'Chat send timeout'),
  CHAT_OUTBOX_CLAIM_TIMEOUT_MS: int(
    60_000,
    1,
    'A claimed chat message not finished within this is claimed again (more than CHAT_SEND_TIMEOUT_MS)',
  ),
  CHAT_OUTBOX_MAX_ATTEMPTS: int(8, 1, 'Attempts before a chat message is failed'),
  CHAT_OUTBOX_RETRY_BASE_MS: int(10_000, 1, 'First retry delay, doubled per attempt'),
  CHAT_OUTBOX_RETRY_MAX_MS: int(3_600_000, 1, 'Longest retry delay'),
  CHAT_OUTBOX_UNCONFIGURED_RETRY_MS: int(300_000, 1, 'Retry period of messages whose channel is not configured'),
  CHAT_OUTBOX_BATCH_SIZE: int(20, 1, 'Chat outbox rows claimed per round'),
  // Payments and connectors (src/modules/integrations)
  PAYMENT_CONNECTOR_READY: flag(false, 'Force the reserved payment connector to count as ready'),
  PARTNER_PAY_WEBHOOK_SECRET: text('HMAC secret of the partner-pay connector webhook'),
  PARTNER_CHEF_PAY_WEBHOOK_SECRET: text('HMAC secret of the partner-chef-pay connector webhook'),
  // GPS history (src/modules/logistics): driver_location is partitioned by UTC day
  LOCATION_HISTORY_RETENTION_DAYS: int(
    90,
    1,
    'GPS points older than this many days are dropped (whole daily partitions); a finished trip keeps its own track',
  ),
  LOCATION_PARTITIONS_AHEAD_DAYS: int(7, 1, 'Daily partitions of the GPS history created ahead of today', 366),
  // Offline sync (src/modules/mobile)
  SYNC_ENTITY_LIMIT: int(1000, 1, 'Rows per entity in one sync pull page'),
  // Outbound webhooks (src/modules/webhooks)
  WEBHOOK_ALLOW_HTTP: flag(false, 'Allow http:// targets (always allowed in development)'),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: flag(false, 'Allow private, loopback and reserved target addresses (never on a public deployment)'),
  WEBHOOK_TIMEOUT_MS: int(10_000, 1, 'Whole exchange with a receiver'),
  WEBHOOK_CLAIM_TIMEOUT_MS: int(60_000, 1, 'A claimed delivery not finished within this is claimed again (more than WEBHOOK_TIMEOUT_MS)'),
  WEBHOOK_CONCURRENCY: int(32, 1, 'Sends in flight per instance'),
  WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY: int(16, 1, 'Sends in flight to one subscription, across instances'),
  WEBHOOK_RETRY_BASE_MS: int(30_000, 1, 'First retry delay, doubled per attempt (with jitter)'),
  WEBHOOK_RETRY_MAX_MS: int(6 * 3_600_000, 1, 'Longest retry delay'),
  WEBHOOK_RETRY_WINDOW_MS: int(24 * 3_600_000, 1, 'No attempt is scheduled past this age of a delivery'),
  WEBHOOK_DISABLE_AFTER_MS: int(24 * 3_600_000, 1, 'A subscription failing for this long is disabled and its owner notified'),
  WEBHOOK_WORKER_INTERVAL_MS: int(500, 1, 'Webhook worker period'),
  WEBHOOK_MAX_SUBSCRIPTIONS: int(25, 1, 'Subscriptions per organization'),
  WEBHOOK_LOCATION_INTERVAL_MS: int(30_000, 0, 'At most one trip.location_updated per trip and subscription in this period'),
  WEBHOOK_TEST_PER_MINUTE: int(20, 1, 'Test events and redeliveries per user per minute'),
  WEBHOOK_DELIVERY_RETENTION_DAYS: int(
    30,
    1,
    'Finished deliveries (delivered, failed, cancelled) and their attempt logs are deleted this many days after they finished',
  ),
  WEBHOOK_PRUNE_INTERVAL_MS: int(600_000, 1_000, 'How often the webhook retention pruner runs'),
  // API keys (src/modules/apikeys)
  API_KEY_RATE_LIMIT_PER_MINUTE: int(120, 1, 'Requests per API key per minute, shared by every instance (429 RATE_LIMITED beyond)'),
  API_KEY_MAX_PER_OWNER: int(25, 1, 'Live (not revoked) API keys per owner'),
  // GPS apps (OsmAnd protocol, src/modules/logistics)
  GPS_DEVICE_RATE_LIMIT_PER_MINUTE: int(
    120,
    1,
    'Fixes per GPS device token per minute, shared by every instance (429 RATE_LIMITED beyond)',
  ),
  // Spreadsheet imports (src/modules/imports)
  IMPORT_INLINE_ROWS: int(
    200,
    1,
    'Imports of up to this many rows are processed in the request; larger ones in the background (202)',
    5000,
  ),
  IMPORT_CHUNK_ROWS: int(200, 1, 'Rows of a large import processed per background step (one transaction each)', 5000),
  // Console and tracking pages (src/platform/web.ts)
  MAP_TILE_URL: text('Map tile URL template with {z}/{x}/{y}, or "none" for a plain map (default: OpenStreetMap)'),
  MAP_TILE_ATTRIBUTION: text('Attribution shown under the map tiles'),
});
export type Settings = Static<typeof Settings>;

const TRUE = ['1', 'true', 'yes', 'on'];
const FALSE = ['0', 'false', 'no', 'off'];

/** Reads and checks every setting of `Settings` from the environment's text; throws `config: NAME ...` on a bad value. */
export function readSettings(source: Record<string, string | undefined>): Settings {
  const out: Record<string, unknown> = {};
  for (const [name, declared] of Object.entries(Settings.properties) as [string, TSchema & Record<string, any>][]) {
    const v = source[name];
    const schema = declared;
    if (v === undefined || v === '') {
      if (schema.default !== undefined && !(Symbol.for('TypeBox.Optional') in schema)) out[name] = schema.default;
      continue;
    }
    if (schema.type === 'integer') {
      const n = Number(v);
      const max = schema.maximum as number | undefined;
      if (!Number.isSafeInteger(n) || n < schema.minimum || (max !== undefined && n > max)) {
        throw new Error(
          `config: ${name} must be an integer ${max !== undefined ? `in ${schema.minimum}..${max}` : `>= ${schema.minimum}`}, got "${v}"`,
        );
      }
      out[name] = n;
    } else if (schema.type === 'boolean') {
      const b = v.trim().toLowerCase();
      if (!TRUE.includes(b) && !FALSE.includes(b)) throw new Error(`config: ${name} must be true or false, got "${v}"`);
      out[name] = TRUE.includes(b);
    } else if (schema.anyOf) {
      const allowed = (schema.anyOf as { const: string }[]).map((o) => o.const);
      const w = v.trim().toLowerCase();
      if (!allowed.includes(w)) throw new Error(`config: ${name} must be ${allowed.map((a) => `"${a}"`).join(' or ')}, got "${v}"`);
      out[name] = w;
    } else out[name] = v;
  }
  return out as Settings;
}

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
  /** A streaming replica for the reads of GET requests (DATABASE_REPLICA_URL), else null. */
  databaseReplicaUrl: string | null;
  dataDir: string;
  /** The signing keys, one per purpose, derived from the secret (`src/platform/keys.ts`). */
  keys: SigningKeys;
  /**
   * False when JWT_SECRET is unset (the embedded default): the keys are then those of a random secret until the
   * server replaces them with the secret kept in DATA_DIR (`withStoredSecret`), so tools and tests write nothing.
   */
  jwtSecretGiven: boolean;
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
  /** Guessing throttle: per account-and-address back-off and a per-account ceiling (see docs/API.md, "Login, passwords and tokens"). */
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
  /**
   * The keys of the secrets at rest (`src/platform/secrets.ts`): SECRETS_KEY encrypts, SECRETS_KEY_PREVIOUS still
   * decrypts during a rotation. Null when SECRETS_KEY is unset: the embedded default then reads the key kept in
   * DATA_DIR (`withSecretsKey`); on PostgreSQL the start refuses only when stored secrets exist.
   */
  secrets: SecretsKeyring | null;
  /** SECRETS_KEY_PREVIOUS, kept to pair with the key read from DATA_DIR. */
  secretsPreviousKey: Buffer | null;
  /** The modules' settings, typed and defaulted (`Settings` above). */
  settings: Settings;
  /**
   * Operator-provisioned secrets that data refers to by name (a merchant's `env:CHAT_SECRET_<ORG>_<MERCHANT>`):
   * the only settings read by a name known at run time. From the environment given to `loadConfig`, then the process's.
   */
  secret(name: string): string | undefined;
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
  const entries = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
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

/**
 * SECRETS_KEY and SECRETS_KEY_PREVIOUS, each 32 bytes (64 hex characters or base64), checked; throws `config: ...`.
 * What the server and `npm run secrets:rotate` read.
 */
export function readSecretsKeys(source: Record<string, string | undefined>): { current: Buffer | null; previous: Buffer | null } {
  const current = source.SECRETS_KEY ? parseSecretsKey('SECRETS_KEY', source.SECRETS_KEY) : null;
  const previous = source.SECRETS_KEY_PREVIOUS ? parseSecretsKey('SECRETS_KEY_PREVIOUS', source.SECRETS_KEY_PREVIOUS) : null;
  if (previous && !current && source.DATABASE_URL)
    throw new Error('config: SECRETS_KEY_PREVIOUS goes with SECRETS_KEY (the key values are encrypted with now)');
  return { current, previous };
}

/** The config with the secrets key kept in DATA_DIR (the embedded default without SECRETS_KEY). */
export function withSecretsKey(config: Config, keyText: string): Config {
  return { ...config, secrets: keyring(parseSecretsKey('the key file', keyText), config.secretsPreviousKey) };
}

/** The config with its keys derived from `secret` (the one kept in DATA_DIR when JWT_SECRET is unset). */
export function withStoredSecret(config: Config, secret: string): Config {
  return { ...config, keys: deriveKeys(secret) };
}

function intOf(name: string, value: string | undefined, fallback: number, min = 0): number {
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
  if ((env === 'production' || databaseUrl) && (!secret || secret.length < MIN_SECRET_LENGTH)) {
    throw new Error(`config: JWT_SECRET (at least ${MIN_SECRET_LENGTH} characters) is required with DATABASE_URL or in production`);
  }
  if (secret && secret.length < MIN_SECRET_LENGTH) throw new Error(`config: JWT_SECRET must be at least ${MIN_SECRET_LENGTH} characters`);
  for (const name of ['DATABASE_MIGRATION_URL', 'DATABASE_SYSTEM_URL', 'DATABASE_REPLICA_URL']) {
    if (source[name] && !source.DATABASE_URL) throw new Error(`config: ${name} goes with a PostgreSQL DATABASE_URL; set DATABASE_URL too`);
  }
  const t = DEFAULT_LOGIN_THROTTLE;
  const secrets = { ...source };
  const secretsKeys = readSecretsKeys(source);
  const config: Config = {
    env,
    port: intOf('PORT', source.PORT, 3000, 0),
    host: source.HOST || '0.0.0.0',
    databaseUrl,
    databaseMigrationUrl: source.DATABASE_MIGRATION_URL || null,
    databaseSystemUrl: source.DATABASE_SYSTEM_URL || null,
    databaseReplicaUrl: source.DATABASE_REPLICA_URL || null,
    dataDir: path.resolve(source.DATA_DIR || './data'),
    // Without JWT_SECRET the server keeps a generated one in DATA_DIR (withStoredSecret); until then, a random one.
    keys: deriveKeys(secret || randomBytes(32).toString('hex')),
    jwtSecretGiven: Boolean(secret),
    accessTokenTtlSeconds: intOf('ACCESS_TOKEN_TTL_SECONDS', source.ACCESS_TOKEN_TTL_SECONDS, 900, 10),
    refreshTokenTtlSeconds: intOf('REFRESH_TOKEN_TTL_SECONDS', source.REFRESH_TOKEN_TTL_SECONDS, 30 * 24 * 3600, 60),
    corsOrigins: (source.CORS_ORIGINS || '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    metricsToken: source.METRICS_TOKEN || null,
    logLevel: source.LOG_LEVEL || (env === 'test' ? 'silent' : 'info'),
    bodyLimitBytes: intOf('BODY_LIMIT_BYTES', source.BODY_LIMIT_BYTES, 1024 * 1024, 1024),
    // The demo organization has a published password: seeded by default only on the embedded database.
    seedDemo: bool(source.SEED_DEMO, !databaseUrl),
    workers: bool(source.WORKERS, true),
    loginRateLimitPerIp: intOf('LOGIN_RATE_LIMIT_PER_IP', source.LOGIN_RATE_LIMIT_PER_IP, 50, 1),
    publicBaseUrl: (source.PUBLIC_BASE_URL || '').replace(/\/+$/, ''),
    loginThrottle: {
      ...t,
      freeAttempts: intOf('LOGIN_FREE_ATTEMPTS', source.LOGIN_FREE_ATTEMPTS, t.freeAttempts, 1),
      maxDelaySeconds: intOf('LOGIN_MAX_DELAY_SECONDS', source.LOGIN_MAX_DELAY_SECONDS, t.maxDelaySeconds, 1),
      accountCeiling: intOf('LOGIN_ACCOUNT_CEILING', source.LOGIN_ACCOUNT_CEILING, t.accountCeiling, 1),
    },
    onboardingRateLimitPerIp: intOf('ONBOARDING_RATE_LIMIT_PER_IP', source.ONBOARDING_RATE_LIMIT_PER_IP, 10, 1),
    onboardingRateLimitPerEmail: intOf('ONBOARDING_RATE_LIMIT_PER_EMAIL', source.ONBOARDING_RATE_LIMIT_PER_EMAIL, 3, 1),
    refreshReuseGraceSeconds: intOf('REFRESH_REUSE_GRACE_SECONDS', source.REFRESH_REUSE_GRACE_SECONDS, 10, 0),
    trustProxy: parseTrustProxy(source.TRUST_PROXY),
    secrets: secretsKeys.current ? keyring(secretsKeys.current, secretsKeys.previous) : null,
    secretsPreviousKey: secretsKeys.previous,
    settings: readSettings(source),
    secret: (name) => secrets[name] ?? process.env[name],
    ...overrides,
  };
  return config;
}

/** Where the data lives, and nothing else: what `npm run migrate`, `backup` and `restore` read (no JWT secret). */
export interface DatabaseSettings {
  databaseUrl: string | null;
  /** The schema owner's connection (DATABASE_MIGRATION_URL), else DATABASE_URL. */
  migrationUrl: string | null;
  dataDir: string;
  /** The embedded database's folder (DATA_DIR/pglite); null on PostgreSQL. */
  pgliteDir: string | null;
}

/** The database settings alone, checked as `loadConfig` checks them; throws `config: NAME ...` on a bad combination. */
export function loadDatabaseSettings(source: Record<string, string | undefined> = process.env): DatabaseSettings {
  for (const name of ['DATABASE_MIGRATION_URL', 'DATABASE_SYSTEM_URL']) {
    if (source[name] && !source.DATABASE_URL) throw new Error(`config: ${name} goes with a PostgreSQL DATABASE_URL; set DATABASE_URL too`);
  }
  const databaseUrl = source.DATABASE_URL || null;
  const dataDir = path.resolve(source.DATA_DIR || './data');
  return {
    databaseUrl,
    migrationUrl: source.DATABASE_MIGRATION_URL || databaseUrl,
    dataDir,
    pgliteDir: databaseUrl ? null : path.join(dataDir, 'pglite'),
  };
}
