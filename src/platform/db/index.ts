import { createReplicaRouter, type ReplicaStatus } from './replica.js';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import pg from 'pg';
import type { PgDatabase } from 'drizzle-orm/pg-core';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { Mutex } from './mutex.js';
import { parseTimestamptz } from './types.js';
import type { Settings } from '../../config.js';

/** Role every request runs as: no superuser, no BYPASSRLS, so row-level security always applies. */
export const TENANT_ROLE = 'app_tenant';
/**
 * Role of the explicit cross-tenant transactions (`withSystem`: login lookup, rate limits, outbox
 * workers, settlements, onboarding...) when the service connects as a least-privilege login role:
 * NOLOGIN, BYPASSRLS, table privileges only (not the owner: no DDL, cannot touch policies or
 * `_migrations`, cannot rewrite the append-only tables). See README, "PostgreSQL".
 */
export const WORKER_ROLE = 'app_worker';

export interface QueryResult<R> {
  rows: R[];
  rowCount: number;
}

/**
 * A hot statement run as a named prepared statement (PostgreSQL): parsed once per connection, and once the server
 * has seen it five times it may keep a generic plan, so it is not planned again on every call (planning was most
 * of the database time of GET /trips). Only for statements whose generic plan is good: no optional filters written
 * as `($1 IS NULL OR ...)` (their generic plan cannot use an index); build the SQL with the filters present instead,
 * and check the plan (bench/logistics.ts EXPLAINs the hot ones with `plan_cache_mode = force_generic_plan`).
 */
export interface Prepared {
  readonly text: string;
  readonly name: string;
  /**
   * In `readTenant`, run with `plan_cache_mode = force_generic_plan` (never planned after its Parse). For statements
   * whose generic plan is checked and the server would not pick on its own: a `LIMIT $n` makes the server estimate
   * 10 % of the rows, so it keeps re-planning GET /trips although its generic plan is the same backward key scan.
   */
  readonly generic: boolean;
}
const preparedByText = new Map<string, Prepared>();
/** The `Prepared` of a statement text; the name is a hash of the text, so one text has one name everywhere. */
export function prepared(text: string, opts: { generic?: boolean } = {}): Prepared {
  const key = opts.generic ? `g:${text}` : text;
  let p = preparedByText.get(key);
  if (!p) {
    p = { text, name: `p_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`, generic: !!opts.generic };
    if (preparedByText.size < 5_000) preparedByText.set(key, p);
  }
  return p;
}
const textOf = (s: string | Prepared): string => (typeof s === 'string' ? s : s.text);

/** Drizzle over either driver (same pg-core dialect). */
export type Orm = PgDatabase<any, any, any>;

/** A transaction handle. Repositories take it as their first argument. */
export interface Tx {
  /** A statement with bind parameters; a `Prepared` one runs as a named prepared statement on PostgreSQL. */
  query<R = any>(text: string | Prepared, params?: unknown[]): Promise<QueryResult<R>>;
  /**
   * The transaction's last statement, sent with its COMMIT in one exchange (on PostgreSQL: no round trip between the
   * statement and the COMMIT, so the row locks it takes are released by the server without waiting for this process).
   * `then`: statements run after it in the same exchange, in order, each with its own snapshot (their rows are
   * discarded). When it answers, the transaction is committed; if it or one of `then` fails, nothing is. Nothing may
   * follow it in the transaction: a later statement throws. Not in a read (`readTenant`).
   */
  queryAndCommit<R = any>(text: string | Prepared, params?: unknown[], then?: readonly Step[]): Promise<QueryResult<R>>;
  /**
   * A write whose rows nobody reads (an audit row, a webhook delivery). On PostgreSQL it is not sent on its own: it
   * goes ahead of the transaction's next statement, or of its COMMIT, in the same exchange, so it runs in the same
   * order as if sent now and costs no round trip; if it fails, that next statement fails with its error (and the
   * transaction with it). On PGlite it runs at once. Not in a read.
   */
  queue(text: string | Prepared, params?: unknown[]): Promise<void>;
  /** Runs SQL text that may hold several statements (simple protocol, no parameters). */
  exec(text: string): Promise<void>;
  /** Drizzle bound to this transaction, for typed queries. */
  readonly orm: Orm;
  readonly kind: DbKind;
  /** The organization of a tenant transaction (`withTenant`, `readTenant`: its row-level security); none in the others. */
  readonly organizationId?: string;
}

export interface TenantContext {
  organizationId: string;
  userId: string | null;
  /**
   * Who reads when there is no user (a recipient's link): a replica read is allowed for him (within the staleness
   * bound; he has no writes of his own to see). Reads with neither stay on the primary.
   */
  reader?: string;
}

export type DbKind = 'pglite' | 'postgres';

export interface ConnectionRole {
  /** `session_user`: the login role of the connection. */
  user: string;
  superuser: boolean;
  bypassrls: boolean;
  /** May `SET ROLE app_tenant` / `app_worker` (member of the role, directly or not). */
  tenantMember: boolean;
  workerMember: boolean;
}

const CONNECTION_ROLE_SQL = `SELECT r.rolname AS user, r.rolsuper AS superuser, r.rolbypassrls AS bypassrls,
    coalesce((SELECT pg_has_role(session_user, t.oid, 'MEMBER') FROM pg_roles t WHERE t.rolname = '${TENANT_ROLE}'), false) AS tenant_member,
    coalesce((SELECT pg_has_role(session_user, w.oid, 'MEMBER') FROM pg_roles w WHERE w.rolname = '${WORKER_ROLE}'), false) AS worker_member
  FROM pg_roles r WHERE r.rolname = session_user`;

function toConnectionRole(row: {
  user: string;
  superuser: boolean;
  bypassrls: boolean;
  tenant_member: boolean;
  worker_member: boolean;
}): ConnectionRole {
  return {
    user: row.user,
    superuser: row.superuser,
    bypassrls: row.bypassrls,
    tenantMember: row.tenant_member,
    workerMember: row.worker_member,
  };
}

/**
 * The prelude of a system transaction for this connecting role. A superuser or BYPASSRLS role keeps its
 * own identity (exactly the behaviour before least privilege); any other role switches to `app_worker`,
 * and must be allowed to: a clear error at the first system transaction rather than empty results.
 */
function systemPrelude(role: ConnectionRole, setting = 'DATABASE_URL'): Step[] {
  if (role.superuser || role.bypassrls) return [['BEGIN']];
  if (!role.workerMember || !role.tenantMember) {
    throw new Error(
      `database: the role "${role.user}" of ${setting} is neither superuser nor BYPASSRLS, so it must be a member of ` +
        `${TENANT_ROLE} and ${WORKER_ROLE} (GRANT ${TENANT_ROLE}, ${WORKER_ROLE} TO "${role.user}"; see README, "PostgreSQL")`,
    );
  }
  return [['BEGIN'], [`SELECT set_config('role', '${WORKER_ROLE}', true)`]];
}

export interface ListenerStatus {
  /** idle: nothing listens yet; connected: LISTEN active; reconnecting: lost, retrying with back-off. */
  state: 'idle' | 'connected' | 'reconnecting';
  /** Times the listening connection was lost since start. */
  losses: number;
  /** Failed reconnection attempts during the current outage. */
  failed_attempts: number;
  since: string;
  last_error: string | null;
}

/** Back-off of the listener's reconnection: 100 ms doubling to 5 s, with jitter. */
export function listenerBackoffMs(attempt: number): number {
  const base = Math.min(5_000, 100 * 2 ** Math.min(attempt, 6));
  return Math.round(base / 2 + Math.random() * (base / 2));
}

export interface Database {
  readonly kind: DbKind;
  /** A transaction as the tenant role with `app.organization_id` / `app.user_id` set: RLS confines every query. */
  withTenant<T>(ctx: TenantContext, fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * An explicit cross-tenant transaction (login lookups, rate limits, workers, onboarding). When the
   * connecting role is neither superuser nor BYPASSRLS (production), it runs as `app_worker`
   * (`SET LOCAL ROLE`); when it is (development, CI, PGlite), as the connecting role, as before.
   */
  withSystem<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** A transaction as the connecting role with no role switch: migrations, which connect as the schema owner. */
  withOwner<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** The connecting role (of DATABASE_URL) and what it may do; read once. */
  connectionRole(): Promise<ConnectionRole>;
  /**
   * Read-only work under the tenant context, without BEGIN and COMMIT: every statement is one exchange (its
   * own implicit transaction, on PostgreSQL: the tenant settings, role and read-only mode travel with it and
   * end with it), one round trip each. Each statement sees the data committed before it started, as each
   * statement of a READ COMMITTED transaction does; no locks survive a statement, and a write fails
   * (25006). For the hot reads (GET /me, /trips, /drivers/nearby, the realtime hub).
   */
  readTenant<T>(ctx: TenantContext, fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** The streaming replica's state (`DATABASE_REPLICA_URL`), null without one. */
  replicaStatus?(): ReplicaStatus | null;
  /** The primary's connection pool now (PostgreSQL): connections open, in use, and requests waiting for one; null in process. */
  poolStatus?(): PoolStatus | null;
  /** One read-only statement under the tenant context in one round trip (`readTenant` with one statement). */
  tenantRead<R = any>(ctx: TenantContext, text: string | Prepared, params?: unknown[]): Promise<R[]>;
  /**
   * One write that stands alone, under the tenant context, in one round trip: on PostgreSQL the tenant settings travel
   * with it and the server commits it at the exchange's end as its own implicit transaction (no BEGIN, no COMMIT). For
   * a hot single-statement write (a webhook delivery's outcome); anything that must commit with other writes takes
   * `withTenant`. Always on the primary. Its rows.
   */
  tenantWrite<R = any>(ctx: TenantContext, text: string | Prepared, params?: unknown[]): Promise<R[]>;
  /** Subscribe to a NOTIFY channel; returns an unsubscribe function. */
  listen(channel: string, onMessage: (payload: string) => void): Promise<() => Promise<void>>;
  /**
   * Told when the listening connection is lost ('lost': notifications may be missed from now on) and
   * when it listens again ('restored': catch up from the tables). Returns an unsubscribe function.
   */
  onListenerChange(cb: (change: 'lost' | 'restored') => void): () => void;
  /** The listening connection's state, for /health and metrics. */
  listenerStatus(): ListenerStatus;
  /**
   * The embedded database only: its data directory dumped (`dumpDataDir`, uncompressed), then `whileLocked` run, with
   * no transaction in progress and none starting until it returns (backups, src/platform/db/backup.ts).
   */
  snapshot?<T>(whileLocked: (dump: Blob) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

// Same JS types on both drivers: numeric stays a string (money), int8 a number (counts), date a string.
const PARSE_INT8 = (v: string) => Number(v);
const PARSE_TEXT = (v: string) => v;
pg.types.setTypeParser(20, PARSE_INT8);
pg.types.setTypeParser(1082, PARSE_TEXT);
// timestamptz: the same Date, parsed without regular expressions (the /trips rows carry a dozen each).
pg.types.setTypeParser(1184, parseTimestamptz);

export interface PoolStatus {
  max: number;
  open: number;
  in_use: number;
  waiting: number;
}

/** One statement of a transaction's setup: SQL text (or a prepared statement) and its parameters. */
/** A statement and its parameters (a transaction's setup, or statements sent with another in one exchange). */
export type Step = readonly [statement: string | Prepared, params?: readonly unknown[]];

/** Tenant settings and the role switch in one statement (`role` is a setting too, so no separate SET ROLE). */
const TENANT_SETTINGS_SQL = `SELECT set_config('app.organization_id', $1, true), set_config('app.user_id', $2, true), set_config('role', '${TENANT_ROLE}', true)`;

const TENANT_SETTINGS = prepared(TENANT_SETTINGS_SQL);

function tenantSettings(ctx: TenantContext): Step {
  return [TENANT_SETTINGS, [ctx.organizationId, ctx.userId ?? '']];
}

/** The tenant settings of a read (`readTenant`): the same, and the transaction read-only. */
const READ_SETTINGS_SQL = `SELECT set_config('app.organization_id', $1, true), set_config('app.user_id', $2, true), set_config('role', '${TENANT_ROLE}', true), set_config('transaction_read_only', 'on', true)`;
const READ_SETTINGS = prepared(READ_SETTINGS_SQL);
/** The same, for a `generic` prepared statement. */
const READ_SETTINGS_GENERIC = prepared(READ_SETTINGS_SQL.replace(/\)$/, "), set_config('plan_cache_mode', 'force_generic_plan', true)"));

/**
 * Narrows a system transaction to one tenant from here on: the tenant settings and role, as in
 * `withTenant`. For workers that pick their row across tenants (locked) and then do the tenant's work
 * under row-level security; locks taken before stay held.
 */
export async function enterTenant(tx: Tx, ctx: TenantContext): Promise<void> {
  const [text, params] = tenantSettings(ctx);
  await tx.query(text, [...params!]);
}

/** BEGIN, then the settings: if the settings fail, the transaction is aborted and nothing after them runs. */
function tenantPrelude(ctx: TenantContext): Step[] {
  return [['BEGIN'], tenantSettings(ctx)];
}

/**
 * Drizzle wraps the driver's error (and puts the query parameters in its message): a transaction hands its caller the
 * database error itself, so retries and the HTTP mapping of SQLSTATE codes (23505 → 409...) work the same for `tx.orm`.
 */
export const driverError = (err: unknown): unknown => (err instanceof DrizzleQueryError && err.cause ? err.cause : err);

const RETRYABLE = new Set(['40001', '40P01']);

/**
 * A replica read that failed for want of the replica, not for its query: no connection, the standby shutting down or
 * not accepting connections (57P0x, 08xxx), or a recovery conflict cancelling the read (40001).
 */
function isReplicaFailure(err: unknown): boolean {
  if (err instanceof pg.DatabaseError) return /^(08|57P)/.test(err.code ?? '') || err.code === '40001';
  if (!(err instanceof Error)) return false;
  // A socket error (ECONNREFUSED, ECONNRESET: Node's system errors carry `syscall`), or node-postgres losing or not
  // getting a connection; an error of the work itself (a 404 of the service) is not the replica's.
  return (
    'syscall' in err ||
    /^Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(err.message)
  );
}

async function withRetry<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (attempt >= 4 || !code || !RETRYABLE.has(code)) throw err;
      await new Promise((r) => setTimeout(r, 5 * attempt + Math.random() * 10));
    }
  }
}

// ---------------------------------------------------------------- PostgreSQL (node-postgres pool)

export interface PostgresOptions {
  max?: number;
  /** The longest wait for a pooled connection (ms): when the database is down or the pool exhausted, 503 instead of hanging. */
  connectTimeoutMs?: number;
  /**
   * A second login for the system transactions (`DATABASE_SYSTEM_URL`): then the login of `url`, which
   * serves every tenant request, need not be a member of `app_worker` and cannot switch to it at all.
   */
  systemUrl?: string | null;
  /**
   * Named prepared statements for `prepared(...)` SQL (default true). Off: they run unnamed (parsed and planned on
   * every call), for a transaction-mode pooler that would hand the next exchange to a session without them.
   */
  preparedStatements?: boolean;
  /**
   * A streaming replica (`DATABASE_REPLICA_URL`) for the reads of GET requests, with read-your-writes for the
   * caller and a staleness bound (src/platform/db/replica.ts).
   */
  replicaUrl?: string | null;
  replicaMaxLagMs?: number;
  replicaCheckMs?: number;
}

/** The parts of node-postgres' Query that `PrefixedQuery` builds on (not in its type declarations). */
interface PgQueryInternals {
  name?: string;
  callback?: (err: Error | null, res?: pg.QueryResult) => void;
  prepare(connection: PgConnection): void;
  requiresPreparation(): boolean;
  hasBeenParsed(connection: PgConnection): boolean;
  handleDataRow(msg: unknown): void;
  handleCommandComplete(msg: unknown, connection: PgConnection): void;
  handleError(err: Error, connection: PgConnection): void;
  portal?: string;
  _getRows(connection: PgConnection, rows?: number): void;
}
interface PgConnection {
  parse(m: { text: string; name?: string }): void;
  bind(m: { values: readonly unknown[]; statement?: string; valueMapper?: (v: unknown) => unknown }): void;
  execute(m: { portal?: string; rows?: number }): void;
  sync(): void;
}
const PgQuery = pg.Query as unknown as new (config: unknown, values?: unknown) => PgQueryInternals;
/** node-postgres' own conversion of a bound value (dates, arrays, JSON) to its wire text, as its Query binds them. */
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (v: unknown) => unknown };

/**
 * The named statements known to each connection's server session. Ours, not node-postgres' own bookkeeping: a
 * name is added when its Parse is sent; if that exchange fails, the connection is dropped (`parsedInFailure`), so a
 * name is never believed parsed on a session that does not have it.
 */
const namedOn = new WeakMap<object, Set<string>>();
const namesOf = (connection: object): Set<string> => {
  let set = namedOn.get(connection);
  if (!set) namedOn.set(connection, (set = new Set()));
  return set;
};

/** Connections of a pool with `preparedStatements: false`: every statement runs unnamed. */
const unnamedOnly = new WeakSet<object>();

/** Past this many named statements on a connection, further ones run unnamed (parsed and planned each time). */
const MAX_NAMED_PER_CONNECTION = 200;

/** A prefix statement: SQL text (unnamed) or a prepared statement, and its parameters. */
type PrefixStep = readonly [statement: string | Prepared, params?: readonly unknown[]];

/**
 * One statement with other statements before it (`prefix`: the transaction's setup) in a single exchange of the
 * extended protocol: Parse/Bind/Execute of each prefix statement (their rows are discarded), then the statement
 * itself, and one Sync. One write, one flush by the server, one ReadyForQuery, one callback, where separate queries
 * cost one of each per statement. If a prefix statement fails, the server skips everything up to the Sync: the
 * statement never runs without its setup. Without a BEGIN in the prefix, the whole exchange is one implicit
 * transaction that the server commits at the Sync; `set_config(..., true)` settings end with it. Named (prepared)
 * statements are parsed once per connection.
 */
class PrefixedQuery extends PgQuery {
  private pending: number;
  private parseMain = true;
  /** The statement itself completed: what follows is the suffix's, whose rows are discarded. */
  private mainDone = false;
  /** This exchange sent the Parse of a named statement: if it fails, the connection's statements are uncertain. */
  parsedNamed = false;
  constructor(
    private readonly prefix: readonly PrefixStep[],
    config: unknown,
    values?: unknown,
    private readonly suffix: readonly PrefixStep[] = [],
  ) {
    super(config, values);
    this.pending = prefix.length;
  }
  override requiresPreparation() {
    return this.prefix.length > 0 || this.suffix.length > 0 || !!this.name || super.requiresPreparation();
  }
  /** Parse (a named statement once per connection) and Bind and Execute of one step, on the unnamed portal. */
  private sendStep(connection: PgConnection, names: Set<string>, unnamed: boolean, [statement, params]: PrefixStep) {
    if (typeof statement === 'string' || unnamed) connection.parse({ text: typeof statement === 'string' ? statement : statement.text });
    else if (!names.has(statement.name)) {
      connection.parse({ text: statement.text, name: statement.name });
      names.add(statement.name);
      this.parsedNamed = true;
    }
    connection.bind({
      values: (params ?? []) as unknown[],
      statement: typeof statement === 'string' || unnamed ? '' : statement.name,
      valueMapper: prepareValue,
    });
    connection.execute({ portal: '' });
  }
  override hasBeenParsed() {
    return !this.parseMain;
  }
  override prepare(connection: PgConnection) {
    const names = namesOf(connection);
    const unnamed = unnamedOnly.has(connection);
    if (unnamed) this.name = undefined;
    for (const step of this.prefix) this.sendStep(connection, names, unnamed, step);
    // A bound on the statements a session keeps (the trip list has a statement per filter combination).
    if (this.name && !names.has(this.name) && names.size >= MAX_NAMED_PER_CONNECTION) this.name = undefined;
    if (this.name) {
      this.parseMain = !names.has(this.name);
      if (this.parseMain) {
        names.add(this.name);
        this.parsedNamed = true;
      }
    }
    super.prepare(connection);
  }
  /** The statement's Execute, then the suffix's steps, then the one Sync. */
  override _getRows(connection: PgConnection, rows?: number) {
    if (this.suffix.length === 0 || rows) return super._getRows(connection, rows);
    connection.execute({ portal: this.portal });
    const names = namesOf(connection);
    const unnamed = unnamedOnly.has(connection);
    for (const step of this.suffix) this.sendStep(connection, names, unnamed, step);
    connection.sync();
  }
  override handleDataRow(msg: unknown) {
    if (this.pending === 0 && !this.mainDone) super.handleDataRow(msg);
  }
  override handleCommandComplete(msg: unknown, connection: PgConnection) {
    if (this.pending > 0) this.pending--;
    else if (!this.mainDone) {
      this.mainDone = true;
      super.handleCommandComplete(msg, connection);
    }
  }
}

/** Clients whose exchange failed after parsing a named statement: released as broken (see `namedOn`). */
const parsedInFailure = new WeakSet<pg.PoolClient>();

/** Sends `config`/`values` (as `client.query` takes them) behind `prefix`, as one exchange. */
function prefixedQuery(
  client: pg.PoolClient,
  prefix: readonly PrefixStep[],
  config: unknown,
  values?: unknown,
  suffix: readonly PrefixStep[] = [],
): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    const q = new PrefixedQuery(prefix, config, values, suffix);
    q.callback = (err, res) => {
      if (!err) return resolve(res!);
      if (q.parsedNamed) parsedInFailure.add(client);
      reject(err);
    };
    client.query(q as unknown as pg.Submittable);
  });
}

/** A statement as `client.query` takes it: text and values, and the name of a prepared one. */
const asConfig = (statement: string | Prepared, params?: unknown[]) =>
  typeof statement === 'string'
    ? { text: statement, values: params }
    : { text: statement.text, name: statement.name, values: params, generic: statement.generic };

/** A Tx over a way to send a statement (`client.query`'s arguments) and a way to run multi-statement text. */
function postgresTx(
  submit: (config: { text: string; name?: string; generic?: boolean }, values?: unknown) => Promise<pg.QueryResult>,
  exec: (text: string) => Promise<void>,
  organizationId?: string,
  finish?: (config: { text: string; name?: string; generic?: boolean }, values: unknown, then: readonly Step[]) => Promise<pg.QueryResult>,
  enqueue?: (statement: string | Prepared, params?: unknown[]) => void,
): Tx {
  return {
    kind: 'postgres',
    organizationId,
    async queue(text, params) {
      if (!enqueue) throw new Error('queue: a read writes nothing');
      enqueue(text, params);
    },
    async query(text, params) {
      const r = await submit(asConfig(text, params));
      return { rows: r.rows, rowCount: r.rowCount ?? 0 };
    },
    async queryAndCommit(text, params, then = []) {
      if (!finish) throw new Error('queryAndCommit: a read has nothing to commit');
      const r = await finish(asConfig(text, params), params, then);
      return { rows: r.rows, rowCount: r.rowCount ?? 0 };
    },
    exec,
    // Drizzle calls `client.query(config, values)`: the same path as `query`.
    orm: drizzlePg({ query: submit } as unknown as pg.PoolClient) as unknown as Orm,
  };
}

/** Sends one setup step on its own (a transaction whose first statement cannot carry its setup). */
const sendStep = (client: pg.PoolClient, [statement, params]: PrefixStep): Promise<unknown> =>
  typeof statement === 'string' && !params
    ? client.query(statement)
    : prefixedQuery(client, [], asConfig(statement, params as unknown[] | undefined));

/** Several statements in one text (no parameters) need the simple protocol: they cannot share an extended exchange. */
const isMultiStatement = (config: { text?: string; values?: unknown[]; name?: string }) =>
  !config.name && !config.values?.length && !!config.text?.includes(';');

export function createPostgresDatabase(url: string, opts: PostgresOptions = {}): Database {
  const makePool = (connectionString: string, max: number) => {
    // A bounded wait for a connection: when the database is down or the pool exhausted, the request fails
    // (503 DATABASE_UNAVAILABLE) instead of hanging.
    const p = new pg.Pool({
      connectionString,
      max,
      pipeline: true,
      idleTimeoutMillis: 30_000,
      connectionTimeoutMillis: opts.connectTimeoutMs ?? 5_000,
    });
    p.on('error', () => {
      /* an idle client died; the pool replaces it */
    });
    // A connection that dies while checked out fails its queries (their promises reject, and the
    // transaction drops the client); its 'error' event must not be an uncaught exception on top.
    p.on('connect', (client) => {
      client.on('error', () => undefined);
      if (opts.preparedStatements === false) unnamedOnly.add((client as unknown as { connection: object }).connection);
    });
    return p;
  };
  const pool = makePool(url, opts.max ?? 20);
  const systemPool = opts.systemUrl ? makePool(opts.systemUrl, Math.max(2, Math.ceil((opts.max ?? 20) / 2))) : pool;
  const replicaPool = opts.replicaUrl ? makePool(opts.replicaUrl, opts.max ?? 20) : null;
  const replica = replicaPool
    ? createReplicaRouter({ primary: pool, replica: replicaPool, maxLagMs: opts.replicaMaxLagMs, checkMs: opts.replicaCheckMs })
    : null;
  replica?.start();
  /**
   * A transaction on one pooled client. The setup (BEGIN, tenant settings) is not sent on its own: it goes in the
   * same extended-protocol exchange as the transaction's first statement (`PrefixedQuery`), so a one-statement
   * transaction costs two round trips (setup + statement, COMMIT) and a transaction that runs no statement sends
   * nothing. If the setup fails, the server skips the statement behind it.
   */
  function transaction(client: pg.PoolClient, prelude: Step[], organizationId?: string) {
    /** done: the last statement (`queryAndCommit`) was sent; committed: it answered, the transaction is committed. */
    const state = { begun: false, staleAtStart: false, done: false, committed: false };
    const open = () => {
      if (state.done) throw new Error('a statement after the transaction’s last one (queryAndCommit)');
    };
    /** The first statement carries the setup; a statement that fails there without a server error code means a dead connection. */
    const first = <R>(p: Promise<R>): Promise<R> => {
      p.catch((err: unknown) => {
        if (!(err as { code?: string }).code) state.staleAtStart = true;
      });
      return p;
    };
    /** Statements queued (`Tx.queue`) and not sent yet: they go ahead of the next statement, or of the COMMIT. */
    let queued: Step[] = [];
    /** What the next exchange sends ahead of its statement: the setup if nothing was sent yet, and the queued statements. */
    const ahead = (): Step[] => {
      const steps = state.begun ? queued : [...prelude, ...queued];
      queued = [];
      return steps;
    };
    const submit = (config: { text?: string; values?: unknown[]; name?: string }, values?: unknown): Promise<pg.QueryResult> => {
      open();
      const wasBegun = state.begun;
      const steps = ahead();
      state.begun = true;
      const sent = (p: Promise<pg.QueryResult>) => (wasBegun ? p : first(p));
      if (isMultiStatement(config) && values === undefined) {
        // Several statements in one text: the simple protocol, after what goes ahead of it on its own.
        return sent(Promise.all(steps.map((step) => sendStep(client, step))).then(() => client.query(config as pg.QueryConfig)));
      }
      if (steps.length === 0 && !config.name) return client.query(config as pg.QueryConfig, values as unknown[] | undefined);
      return sent(prefixedQuery(client, steps, config, values));
    };
    const tx = postgresTx(
      submit,
      async (text) => {
        await submit({ text });
      },
      organizationId,
      // The statement, `then` and the COMMIT behind it in one exchange (behind the setup too, when it is the first).
      async (config, values, then) => {
        open();
        state.done = true;
        const suffix: Step[] = [...then, ['COMMIT']];
        const steps = ahead();
        state.begun = true;
        // Not `first`: a connection lost during this exchange may have committed it, so it is never sent again.
        const r = await prefixedQuery(client, steps, config, values, suffix);
        state.committed = true;
        return r;
      },
      (statement, params) => {
        open();
        queued.push([statement, params]);
      },
    );
    /** The COMMIT, with the statements still queued ahead of it (nothing when no statement was ever sent or queued). */
    const commit = async () => {
      if (state.done || (!state.begun && queued.length === 0)) return;
      const steps = ahead();
      state.begun = true;
      await (steps.length ? prefixedQuery(client, steps, { text: 'COMMIT' }) : client.query('COMMIT'));
    };
    return { tx, state, commit };
  }

  /**
   * The transaction-less reads of `readTenant`: every statement carries the tenant settings and read-only mode in
   * its own exchange (one implicit transaction each; nothing to COMMIT or ROLLBACK).
   */
  function readTx(client: pg.PoolClient, ctx: TenantContext) {
    const state = { sent: false, staleAtStart: false };
    const tenant = [ctx.organizationId, ctx.userId ?? ''];
    const settings: Step[] = [[READ_SETTINGS, tenant]];
    const genericSettings: Step[] = [[READ_SETTINGS_GENERIC, tenant]];
    const submit = (config: { generic?: boolean }, values?: unknown): Promise<pg.QueryResult> => {
      const p = prefixedQuery(client, config.generic ? genericSettings : settings, config, values);
      if (!state.sent) {
        state.sent = true;
        p.catch((err: unknown) => {
          if (!(err as { code?: string }).code) state.staleAtStart = true;
        });
      }
      return p;
    };
    const tx = postgresTx(
      submit,
      async () => {
        throw new Error('readTenant: multi-statement SQL has no place in a read');
      },
      ctx.organizationId,
    );
    return { tx, state };
  }

  async function read<T>(ctx: TenantContext, fn: (tx: Tx) => Promise<T>): Promise<T> {
    if (replica?.useReplica(ctx.userId ?? ctx.reader)) {
      try {
        return await readOn(replicaPool!, ctx, fn);
      } catch (err) {
        // The replica went away or cannot serve (a recovery conflict): the primary answers instead.
        if (!isReplicaFailure(err)) throw err;
        replica.markUnreachable(err);
      }
    }
    return readOn(pool, ctx, fn);
  }

  async function readOn<T>(from: pg.Pool, ctx: TenantContext, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return withRetry(async () => {
      for (let attempt = 1; ; attempt++) {
        const client = await from.connect();
        const { tx, state } = readTx(client, ctx);
        let broken = false;
        try {
          return await fn(tx);
        } catch (err) {
          // An idle connection that died (database restarted) fails at its first statement: nothing ran, so
          // drop it and start again on a fresh one, once.
          if (state.staleAtStart) {
            broken = true;
            if (attempt === 1) continue;
          }
          throw driverError(err);
        } finally {
          client.release(broken || parsedInFailure.has(client));
        }
      }
    });
  }

  async function run<T>(prelude: Step[], fn: (tx: Tx) => Promise<T>, from: pg.Pool = pool, organizationId?: string): Promise<T> {
    return withRetry(async () => {
      // An idle connection that died (database restarted) fails at the setup: nothing ran, so drop it
      // and start again on a fresh one, once.
      for (let attempt = 1; ; attempt++) {
        const client = await from.connect();
        const { tx, state, commit } = transaction(client, prelude, organizationId);
        let broken = false;
        try {
          const result = await fn(tx);
          await commit();
          return result;
        } catch (err) {
          // Committed with its last statement: what failed after it cannot undo it (and must not run it again).
          if (state.committed) throw err;
          if (state.staleAtStart) {
            broken = true;
            if (attempt === 1) continue;
            throw err;
          }
          if (state.begun) {
            try {
              await client.query('ROLLBACK');
            } catch {
              broken = true;
            }
          }
          throw driverError(err);
        } finally {
          client.release(broken || parsedInFailure.has(client));
        }
      }
    });
  }

  // ---- LISTEN: one dedicated connection, supervised. Losing it is reported ('lost'), then it is
  // reconnected with back-off (a failed attempt is never cached: the next one opens a new client),
  // every channel is listened to again, and 'restored' lets subscribers catch up from the tables.
  const listeners = new Map<string, Set<(p: string) => void>>();
  const changeHooks = new Set<(change: 'lost' | 'restored') => void>();
  const status: ListenerStatus = { state: 'idle', losses: 0, failed_attempts: 0, since: new Date().toISOString(), last_error: null };
  let listenClient: pg.Client | null = null;
  let connecting: Promise<pg.Client> | null = null;
  let retryTimer: NodeJS.Timeout | null = null;
  let closed = false;
  let listenQueue: Promise<unknown> = Promise.resolve();
  const setState = (state: ListenerStatus['state'], err?: unknown) => {
    if (status.state !== state) status.since = new Date().toISOString();
    status.state = state;
    if (err) status.last_error = err instanceof Error ? err.message : String(err);
  };
  const emit = (change: 'lost' | 'restored') => {
    for (const cb of [...changeHooks]) {
      try {
        cb(change);
      } catch {
        /* a subscriber's failure does not stop the others */
      }
    }
  };

  /** Opens a listening client with every channel; on failure nothing is kept (the next call starts afresh). */
  function connectListener(): Promise<pg.Client> {
    if (listenClient) return Promise.resolve(listenClient);
    if (connecting) return connecting;
    const attempt = (async () => {
      const c = new pg.Client({
        connectionString: url,
        application_name: 'delivery-listen',
        keepAlive: true,
        connectionTimeoutMillis: 5_000,
      });
      let lost = false;
      const onLost = (err?: unknown) => {
        if (lost) return;
        lost = true;
        c.removeAllListeners('notification');
        c.end().catch(() => undefined);
        if (listenClient !== c) return;
        listenClient = null;
        if (closed) return;
        status.losses++;
        status.failed_attempts = 0;
        setState('reconnecting', err ?? new Error('listening connection ended'));
        emit('lost');
        scheduleReconnect();
      };
      c.on('error', onLost);
      c.on('end', () => onLost());
      try {
        await c.connect();
        c.on('notification', (msg) => {
          for (const cb of listeners.get(msg.channel) ?? []) cb(msg.payload ?? '');
        });
        for (const ch of listeners.keys()) await c.query(`LISTEN "${ch}"`);
      } catch (err) {
        lost = true;
        c.removeAllListeners('notification');
        await c.end().catch(() => undefined);
        throw err;
      }
      if (closed) {
        await c.end().catch(() => undefined);
        throw new Error('database closed');
      }
      listenClient = c;
      return c;
    })();
    connecting = attempt;
    // Whatever the outcome, the attempt is forgotten: a failure is never handed to the next caller.
    attempt.then(
      () => (connecting = connecting === attempt ? null : connecting),
      () => (connecting = connecting === attempt ? null : connecting),
    );
    return attempt;
  }

  function scheduleReconnect() {
    if (closed || retryTimer) return;
    retryTimer = setTimeout(() => {
      retryTimer = null;
      connectListener().then(
        () => {
          setState('connected');
          status.failed_attempts = 0;
          emit('restored');
        },
        (err) => {
          status.failed_attempts++;
          setState('reconnecting', err);
          scheduleReconnect();
        },
      );
    }, listenerBackoffMs(status.failed_attempts));
    retryTimer.unref();
  }

  const roles = new Map<pg.Pool, Promise<ConnectionRole>>();
  const roleOf = (p: pg.Pool): Promise<ConnectionRole> => {
    let r = roles.get(p);
    if (!r) {
      r = p.query(CONNECTION_ROLE_SQL).then((res) => toConnectionRole(res.rows[0]));
      r.catch(() => roles.delete(p));
      roles.set(p, r);
    }
    return r;
  };
  const connectionRole = () => roleOf(pool);

  return {
    kind: 'postgres',
    withTenant: replica
      ? async (ctx, fn) => {
          const result = await run(tenantPrelude(ctx), fn, pool, ctx.organizationId);
          replica.noteWrite(ctx.userId);
          return result;
        }
      : (ctx, fn) => run(tenantPrelude(ctx), fn, pool, ctx.organizationId),
    replicaStatus: () => replica?.status() ?? null,
    poolStatus: () => ({
      max: opts.max ?? 20,
      open: pool.totalCount,
      in_use: pool.totalCount - pool.idleCount,
      waiting: pool.waitingCount,
    }),
    withSystem: async (fn) =>
      run(systemPrelude(await roleOf(systemPool), systemPool === pool ? 'DATABASE_URL' : 'DATABASE_SYSTEM_URL'), fn, systemPool),
    withOwner: (fn) => run([['BEGIN']], fn),
    connectionRole,
    readTenant: read,
    tenantRead: async (ctx, text, params) => read(ctx, async (tx) => (await tx.query(text, params)).rows),
    tenantWrite: (ctx, text, params) =>
      withRetry(async () => {
        const client = await pool.connect();
        let broken = false;
        try {
          const { rows } = await prefixedQuery(client, [tenantSettings(ctx)], asConfig(text, params));
          replica?.noteWrite(ctx.userId);
          return rows;
        } catch (err) {
          // No SQLSTATE: the connection failed, and whether the write committed is unknown; it is not sent again.
          broken = !(err as { code?: string }).code;
          throw driverError(err);
        } finally {
          client.release(broken || parsedInFailure.has(client));
        }
      }),
    async listen(channel, onMessage) {
      if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error('bad channel name');
      let set = listeners.get(channel);
      if (!set) {
        listeners.set(channel, (set = new Set()));
        if (status.state !== 'reconnecting') {
          try {
            // A new client LISTENs to every known channel; LISTEN again is a no-op.
            const c = await connectListener();
            // One statement at a time on the listening client (several modules subscribe at start).
            const q = (listenQueue = listenQueue.catch(() => undefined).then(() => c.query(`LISTEN "${channel}"`)));
            await q;
            setState('connected');
          } catch (err) {
            // Kept: the supervisor retries with back-off and LISTENs to it once connected.
            if (!listenClient && !retryTimer) {
              setState('reconnecting', err);
              scheduleReconnect();
            }
            throw err;
          }
        }
        // While reconnecting, the new client will LISTEN to it.
      }
      set.add(onMessage);
      return async () => {
        set!.delete(onMessage);
      };
    },
    onListenerChange(cb) {
      changeHooks.add(cb);
      return () => void changeHooks.delete(cb);
    },
    listenerStatus: () => ({ ...status }),
    async close() {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      listeners.clear();
      changeHooks.clear();
      const c = listenClient;
      listenClient = null;
      if (c) await c.end().catch(() => undefined);
      replica?.stop();
      await pool.end();
      if (systemPool !== pool) await systemPool.end();
      if (replicaPool) await replicaPool.end();
    },
  };
}

// ---------------------------------------------------------------- PGlite (embedded, one connection)

/**
 * `loadDataDir`: start from a dumped data directory (`PGlite.dumpDataDir`), e.g. the tests' migrated
 * template; `instance`: wrap a PGlite the caller opened (and may dump), instead of opening one.
 */
export async function createPgliteDatabase(
  dataDir: string | null,
  opts: { loadDataDir?: Blob; instance?: PGlite } = {},
): Promise<Database> {
  const lite =
    opts.instance ??
    new PGlite(dataDir ?? 'memory://', {
      parsers: { 20: PARSE_INT8, 1082: PARSE_TEXT },
      ...(opts.loadDataDir ? { loadDataDir: opts.loadDataDir } : {}),
    });
  await lite.waitReady;
  const startedAt = new Date().toISOString();
  // PGlite is one connection: transactions take turns.
  const mutex = new Mutex();
  const orm = drizzlePglite(lite) as unknown as Orm;
  const tx: Tx = {
    kind: 'pglite',
    async query(text, params) {
      const r = await lite.query(textOf(text), params as unknown[] | undefined);
      return { rows: r.rows as any[], rowCount: r.affectedRows || r.rows.length };
    },
    async exec(text) {
      await lite.exec(text);
    },
    queryAndCommit: () => Promise.reject(new Error('queryAndCommit: only in a transaction')),
    queue: () => Promise.reject(new Error('queue: only in a transaction')),
    orm,
  };

  /** A transaction's handle: `queryAndCommit` (its last statement) commits it, and nothing may run after it. */
  function liteTx(organizationId?: string) {
    const state = { done: false, committed: false };
    const open = () => {
      if (state.done) throw new Error('a statement after the transaction’s last one (queryAndCommit)');
    };
    const handle: Tx = {
      ...tx,
      organizationId,
      query: (text, params) => (open(), tx.query(text, params)),
      exec: (text) => (open(), tx.exec(text)),
      queue: async (text, params) => {
        open();
        await tx.query(text, params);
      },
      async queryAndCommit(text, params, then = []) {
        open();
        state.done = true;
        const r = await tx.query(text, params);
        for (const [statement, stepParams] of then) await lite.query(textOf(statement), (stepParams ?? []) as unknown[]);
        await lite.exec('COMMIT');
        state.committed = true;
        return r;
      },
    };
    return { handle, state };
  }

  async function run<T>(prelude: Step[], fn: (tx: Tx) => Promise<T>, organizationId?: string): Promise<T> {
    return mutex.run(async () => {
      for (const [statement, params] of prelude)
        await (params ? lite.query(textOf(statement), params as unknown[]) : lite.exec(textOf(statement)));
      const { handle, state } = liteTx(organizationId);
      try {
        const result = await fn(handle);
        if (!state.committed) await lite.exec('COMMIT');
        return result;
      } catch (err) {
        if (state.committed) throw err;
        await lite.exec('ROLLBACK').catch(() => undefined);
        throw driverError(err);
      }
    });
  }

  let role: Promise<ConnectionRole> | null = null;
  const connectionRole = () => (role ??= mutex.run(async () => toConnectionRole((await lite.query<any>(CONNECTION_ROLE_SQL)).rows[0])));

  return {
    kind: 'pglite',
    withTenant: (ctx, fn) => run(tenantPrelude(ctx), fn, ctx.organizationId),
    // The embedded database has one user, a superuser: system transactions keep it (nothing to set up).
    withSystem: async (fn) => run(systemPrelude(await connectionRole()), fn),
    withOwner: (fn) => run([['BEGIN']], fn),
    connectionRole,
    // In process: no round trips to save; one read-only transaction (a write fails, as on PostgreSQL).
    readTenant: (ctx, fn) => run([...tenantPrelude(ctx), ['SET TRANSACTION READ ONLY']], fn, ctx.organizationId),
    replicaStatus: () => null,
    poolStatus: () => null,
    tenantRead: (ctx, text, params) =>
      run([...tenantPrelude(ctx), ['SET TRANSACTION READ ONLY']], async (t) => (await t.query(text, params)).rows),
    tenantWrite: (ctx, text, params) => run(tenantPrelude(ctx), async (t) => (await t.query(text, params)).rows, ctx.organizationId),
    async listen(channel, onMessage) {
      const unsub = await lite.listen(channel, onMessage);
      return async () => {
        await unsub();
      };
    },
    // In-process: the embedded database's notifications cannot be lost.
    onListenerChange: () => () => undefined,
    listenerStatus: () => ({ state: 'connected', losses: 0, failed_attempts: 0, since: startedAt, last_error: null }),
    snapshot: (whileLocked) => mutex.run(async () => whileLocked(await lite.dumpDataDir('none'))),
    async close() {
      await mutex.run(() => lite.close());
    },
  };
}

/**
 * `DB_POOL_MAX` (20) connections per instance; `DB_CONNECT_TIMEOUT_MS` (5000): the longest wait for one before 503;
 * `DB_PREPARED_STATEMENTS` (true): named prepared statements for `prepared(...)` SQL.
 */
export function poolOptionsFrom(s: Pick<Settings, 'DB_POOL_MAX' | 'DB_CONNECT_TIMEOUT_MS' | 'DB_PREPARED_STATEMENTS'>): {
  max: number;
  connectTimeoutMs: number;
  preparedStatements: boolean;
} {
  return { max: s.DB_POOL_MAX, connectTimeoutMs: s.DB_CONNECT_TIMEOUT_MS, preparedStatements: s.DB_PREPARED_STATEMENTS };
}

export async function openDatabase(opts: {
  databaseUrl: string | null;
  systemUrl?: string | null;
  dataDir: string | null;
  replicaUrl?: string | null;
  pool?: { max?: number; connectTimeoutMs?: number; preparedStatements?: boolean; replicaMaxLagMs?: number };
}): Promise<Database> {
  if (opts.databaseUrl)
    return createPostgresDatabase(opts.databaseUrl, { ...opts.pool, systemUrl: opts.systemUrl, replicaUrl: opts.replicaUrl });
  return createPgliteDatabase(opts.dataDir);
}
