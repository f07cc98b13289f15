import type { Tx } from '../../platform/db/index.js';
import type { ModuleContext } from '../../platform/context.js';
import type { ObjectLinker } from '../storage/index.js';
import type { TSchema } from '@sinclair/typebox';
import type { Actor, AppRole, Principal } from '../../platform/auth.js';

/** What logistics asks of the users (identity provides it). */
export interface UsersPort {
  /** Whether the user exists in the caller's organization (with this role when given). */
  userExists(tx: Tx, userId: string, role?: AppRole): Promise<boolean>;
  /** The active users of these kinds in the caller's organization. */
  userIdsByKind(tx: Tx, kinds: Principal[]): Promise<string[]>;
}

/** What logistics reads of the caller's organization (organizations provides it). */
export interface OrganizationPort {
  settingsIn(tx: Tx): Promise<{ default_currency: string; timezone: string }>;
  /** The organization's name, shown on the public tracking page. */
  branding(tx: Tx): Promise<{ name: string } | undefined>;
}

/** The facts of an order logistics checks before it links a trip to it (same merchant, `ready`, no trip yet). */
export interface OrderFacts {
  orderId: string;
  merchantId: string;
  customerUserId: string;
  tripId: string | null;
  status: string;
  /** With `collectedBy`: a cash order the platform's driver collects makes the trip collect `total` at the door. */
  paymentDestination: string;
  collectedBy: string | null;
  total: string;
}

/** The facts of an express request logistics checks before it links a trip to it (same merchant, still `requested`, no trip). */
export interface ExpressFacts {
  merchantId: string;
  status: string;
  tripId: string | null;
}

/** What logistics reads of orders and express requests (commerce provides it). */
export interface OrderFactsPort {
  getOrderFacts(tx: Tx, orderId: string): Promise<OrderFacts | null>;
  getExpressFacts(tx: Tx, expressRequestId: string): Promise<ExpressFacts | null>;
}

/** Cash on delivery: the cash each driver holds (money provides it), for the cash limits. */
export interface CashInHandPort {
  /** Driver id → cash in hand (decimal string); a driver without cash may be missing. */
  cashInHandOf(tx: Tx, driverIds: string[]): Promise<Map<string, string>>;
}

/** The sub-administrators of a territory (subadmin provides it), told of its exceptions. */
export interface TerritorySubadminsPort {
  subadminUserIdsOfTerritory(tx: Tx, organizationId: string, territoryId: string): Promise<string[]>;
}

/** A pull window of offline sync: `clause(alias, from)` gives the condition, `ORDER BY ... LIMIT` and parameters from `$from`. */
export interface SyncWindow {
  limit: number;
  first: boolean;
  clause(alias: string, from: number): { where: string; orderLimit: string; params: unknown[] };
}

/** What a sync operation handler decides (`keep`: a refusal whose writes stay, as a counted wrong PIN). */
export interface SyncOutcome {
  status: 'applied' | 'conflict' | 'rejected';
  code?: string;
  message?: string;
  data?: unknown;
  server?: unknown;
  keep?: boolean;
}

/** Offline sync (mobile provides it): logistics adds its `trips` entity and the driver's trip operations. */
export interface SyncPort {
  registerProvider(provider: {
    entity: string;
    kinds?: Principal[];
    pull(
      tx: Tx,
      actor: Actor,
      window: SyncWindow,
    ): Promise<{
      changed: (Record<string, unknown> & { id: string })[];
      deleted: { id: string; deleted_at: Date | string }[];
      last: [xid: string, id: string] | null;
      read: number;
    }>;
  }): void;
  registerOperation(handler: { type: string; payload: TSchema; apply(tx: Tx, actor: Actor, payload: any): Promise<SyncOutcome> }): void;
}

/**
 * What logistics uses of other modules, given by the composition root. Commerce, money and subadmin are built
 * after logistics, so `orders`, `cash` and `subadmins` are forward references the root provides once they exist.
 */
export type LogisticsContext = ModuleContext<{
  identity: UsersPort;
  organizations: OrganizationPort;
  /** Links evidence and proof objects (storage). */
  storage: ObjectLinker;
  orders: OrderFactsPort;
  sync: SyncPort;
  cash: CashInHandPort;
  subadmins: TerritorySubadminsPort;
}>;
