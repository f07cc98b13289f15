import type { Actor } from '../../platform/auth.js';
import type { ModuleContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import type { GeoPoint, LonLat } from '../../platform/geo.js';
import type { SourceChannel } from '../logistics/index.js';

/**
 * The geocoding hook: a deployment that has a geocoder implements it and hands it to the module in the composition
 * root; rows may then leave their coordinates empty. Without one (the default) coordinates are required. It runs
 * while the upload is validated, once per address without coordinates; null means "not found" (an error of the row).
 */
export interface Geocoder {
  geocode(q: { organizationId: string; address: string; country: string }): Promise<LonLat | null>;
}

/** Where a record came from: staff's imports are `admin`, a merchant's `core`, an API key's `api`. */
export type { SourceChannel };

/** A trip as the import creates it (the fields of POST /trips it uses). */
export interface ImportedTrip {
  pickup: LonLat;
  pickup_address: string;
  dropoff: LonLat;
  dropoff_address: string;
  merchant_id?: string;
  recipient_name?: string | null;
  recipient_phone?: string | null;
  delivery_fee?: string;
  driver_earning?: string;
  notes?: string;
  deliver_after?: string | null;
  deliver_before?: string | null;
  source_channel?: SourceChannel;
}

/** An express request as the import creates it (the body of POST /merchant/delivery-express). */
export interface ImportedExpress {
  branch_id?: string;
  pickup_location?: GeoPoint;
  pickup_address?: string;
  customer_name: string;
  customer_phone?: string;
  dropoff_address: string;
  dropoff_location: GeoPoint;
  package_description?: string;
  declared_value?: string;
}

/** What imports use of other modules, given by the composition root; each creates one record with its module's own rules. */
export type ImportsContext = ModuleContext<{
  /** Trip creation with every rule of POST /trips (logistics). */
  trips: { createTrip(tx: Tx, actor: Actor, input: ImportedTrip): Promise<{ id: string }> };
  /** Express requests with every rule of POST /merchant/delivery-express; staff name the merchant (commerce). */
  express: {
    request(tx: Tx, actor: Actor, input: ImportedExpress, sourceChannel: SourceChannel, merchantId: string | null): Promise<{ id: string }>;
  };
  /** A merchant user's merchant, and a merchant by id (logistics). */
  merchants: {
    merchantOfUser(tx: Tx, userId: string): Promise<{ id: string } | null>;
    getMerchant(tx: Tx, merchantId: string): Promise<{ id: string } | null>;
  };
  /** null: coordinates are required. */
  geocoder: Geocoder | null;
}>;
