import type { ModuleContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import type { Principal } from '../../platform/auth.js';

/** What notifications uses of other modules, given by the composition root. */
export type NotificationsContext = ModuleContext<{
  /** Who is told: the users of a role, and whether a named user exists (identity). */
  identity: {
    userIdsByKind(tx: Tx, kinds: Principal[]): Promise<string[]>;
    userExists(tx: Tx, userId: string): Promise<boolean>;
  };
}>;

/** A page of offline sync as mobile asks for it: the rows changed after a position, at most `limit`. */
export interface SyncWindow {
  limit: number;
  /** First sync (no cursor): current rows only, no tombstones. */
  first: boolean;
  clause(alias: string, from: number): { where: string; orderLimit: string; params: unknown[] };
}
