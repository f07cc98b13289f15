import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from '../config.js';
import type { Database, Tx } from './db/index.js';
import type { Actor } from './auth.js';
import type { EventBus } from './events.js';

/** Modules add their public service here (declaration merging), so others call them with types. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ServiceRegistry {}

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
  services: ServiceRegistry;
  /** Domain events: `ctx.events.record(tx, orgId, {...})` in the transaction of the change. */
  events: EventBus;
  /** Sections of GET /dashboard, one per module; each is computed in the caller's tenant transaction. */
  dashboard: Map<string, DashboardContributor>;
  /** Outbox dispatchers; server.ts runs them, tests tick them by hand. */
  workers: Worker[];
  /** Callbacks run when the app closes (listeners, timers). */
  onClose: (() => Promise<void> | void)[];
}

export type Api = FastifyInstance<any, any, any, any, TypeBoxTypeProvider>;

/** A module: builds its service into `ctx.services` and registers its routes under /api/v1. */
export interface Module {
  name: string;
  /** Creates the service; runs for every module, in order, before any routes are registered. */
  init?(ctx: AppContext): void | Promise<void>;
  routes?(app: Api, ctx: AppContext): void | Promise<void>;
  /** Adds demo data for this module on an empty database (after the organizations and users exist). */
  seed?(ctx: AppContext, demo: DemoSeed): Promise<void>;
}

export interface DemoSeed {
  organizationId: string;
  users: Record<'admin' | 'dispatch' | 'merchant' | 'customer' | 'driver', string>;
  password: string;
}
