import type { Actor } from '../../platform/auth.js';
import type { ModuleContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import type { GeoPoint } from '../../platform/geo.js';

/** An express request as shops needs to see it. */
export interface ShopExpress {
  id: string;
  status: string;
  trip_id: string | null;
}

/** What a shop order becomes: commerce's express requests, created and changed as the merchant's user. */
export interface ShopExpressPort {
  request(
    tx: Tx,
    actor: Actor,
    body: {
      branch_id?: string;
      customer_name: string;
      customer_phone?: string;
      dropoff_address: string;
      dropoff_location: GeoPoint;
      package_description?: string;
    },
    sourceChannel: 'api',
  ): Promise<ShopExpress>;
  revise(
    tx: Tx,
    actor: Actor,
    id: string,
    change: {
      customer_name?: string;
      customer_phone?: string | null;
      dropoff_address?: string;
      dropoff_location?: GeoPoint;
      package_description?: string | null;
    },
  ): Promise<ShopExpress>;
  cancel(tx: Tx, actor: Actor, id: string, reason: string): Promise<ShopExpress>;
  ownsBranch(tx: Tx, merchantId: string, branchId: string): Promise<boolean>;
}

/** The merchant a connection belongs to (logistics). */
export interface ShopMerchants {
  getMerchant(tx: Tx, merchantId: string): Promise<{ id: string; owner_user_id: string; status: string } | null>;
  merchantOfUser(tx: Tx, userId: string): Promise<{ id: string; owner_user_id: string; status: string } | null>;
}

export type ShopsContext = ModuleContext<{ express: ShopExpressPort; merchants: ShopMerchants }>;
