import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from '../config.js';
import type { Database, Tx } from './db/index.js';
import type { Actor } from './auth.js';
import type { EventBus } from './events.js';

/** A module's readiness part: `ok: false` makes /health/ready answer 503. */
export interface ReadinessCheck {
  ok: boolean;
  [k: string]: unknown;
}

export type DashboardSection = Record<string, unknown>;
export type DashboardContributor = (tx: Tx, actor: Actor) => Promise<DashboardSection>;

export interface Worker {
  name: string;
  /** Does one round of work; returns how many items it handled (0 = idle). */
  tick(): Promise<number>;
  intervalMs: number;
}

export interface AppContext {
  config: Config;
  db: Database;
  /** Domain events: `ctx.events.record(tx, orgId, {...})` in the transaction of the change. */
  events: EventBus;
  /** Sections of GET /dashboard, one per module; each is computed in the caller's tenant transaction. */
  dashboard: Map<string, DashboardContributor>;
  /** Outbox dispatchers; server.ts runs them, tests tick them by hand. */
  workers: Worker[];
  /** Callbacks run when the app closes (listeners, timers). */
  onClose: (() => Promise<void> | void)[];
  /** Readiness parts contributed by modules (e.g. realtime: listener and hub state) for GET /health/ready. */
  readiness: Map<string, () => ReadinessCheck | Promise<ReadinessCheck>>;
}

/**
 * A module's view of the app: the shared context plus the services it declared it uses (`deps`), given by the
 * composition root (src/modules/index.ts). Nothing else of another module is reachable from here.
 */
export type ModuleContext<D> = AppContext & { readonly deps: D };

export function withDeps<D>(ctx: AppContext, deps: D): ModuleContext<D> {
  return { ...ctx, deps };
}

export type Api = FastifyInstance<any, any, any, any, TypeBoxTypeProvider>;

/**
 * A module as the app sees it, built by its factory (`createXModule(ctx, deps)`) in the composition root:
 * its routes under /api/v1 and its demo data. Its services are returned beside it, typed, for the modules after it.
 */
export interface Module {
  name: string;
  routes?(app: Api): void | Promise<void>;
  /** Adds demo data for this module on an empty database (after the organizations and users exist). */
  seed?(demo: DemoSeed): Promise<void>;
}

export interface DemoSeed {
  organizationId: string;
  users: Record<'admin' | 'dispatch' | 'merchant' | 'customer' | 'driver', string>;
  password: string;
}
