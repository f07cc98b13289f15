import type { ActorResolver } from '../../platform/auth.js';
import type { ModuleContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';

/** Who takes part in a trip: decides who may open the trip's stream (logistics provides it). */
export interface TripStreamAudience {
  territory_id: string | null;
  driver_user_id: string | null;
  merchant_user_id: string | null;
  customer_user_id: string | null;
}

/** What realtime uses of other modules, given by the composition root. */
export type RealtimeContext = ModuleContext<{
  /** Streams authenticate with the same resolver as the HTTP hook. */
  resolveActor: ActorResolver;
  /** Trip streams ask logistics who takes part in the trip. */
  trips: { tripParticipants(tx: Tx, tripId: string): Promise<TripStreamAudience | null> };
  /** Open streams end with their session: identity says which sessions are still live (`organization:session`). */
  sessions: { aliveSessions(tx: Tx, sessionIds: string[]): Promise<Set<string>> };
}>;
