import type { ModuleContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';

/** The logistics module's resolver of the merchant a `comercio` user works for . */
export type MerchantRef = string | { id: string } | null | undefined;
export type MerchantOfUser = (tx: Tx, userId: string) => Promise<MerchantRef>;
/** The logistics module's merchant by id, within the caller's organization (null: none). */
export type MerchantById = (tx: Tx, merchantId: string) => Promise<{ id: string } | null>;

/** What chat uses of other modules (logistics), given by the composition root. */
export type ChatContext = ModuleContext<{ merchantOfUser: MerchantOfUser; getMerchant: MerchantById }>;
