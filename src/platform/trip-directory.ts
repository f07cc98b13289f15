import type { Tx } from './db/index.js';

/** Who takes part in a trip: used to authorize evidence uploads/downloads and trip streams. */
export interface TripParticipants {
  id: string;
  status: string;
  territory_id: string | null;
  driver_id: string | null;
  driver_user_id: string | null;
  merchant_id: string | null;
  merchant_user_id: string | null;
  customer_user_id: string | null;
}

/** Implemented by the logistics module (trips); read by storage and realtime. */
export interface TripDirectory {
  tripParticipants(tx: Tx, tripId: string): Promise<TripParticipants | null>;
}
