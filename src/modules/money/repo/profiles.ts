import type { Static } from '@sinclair/typebox';
import { and, eq, sql } from 'drizzle-orm';
import { prepared, type Tx } from '../../../platform/db/index.js';
import type { CollectedBy } from '../../commerce/index.js';
import type { ProfileOut } from '../schemas.js';
import { merchantPaymentProfile as profile } from '../tables.js';

/** A merchant's payment profile as stored (derived from the table) and as the API shows it (the response schema). */

/** Asked by every order (the destinations a merchant accepts): prepared. */
const DIRECT_ENABLED = prepared('SELECT 1 FROM merchant_payment_profile WHERE merchant_id = $1 AND direct_payment_enabled');
const PAYMENT_OPTIONS = prepared('SELECT direct_payment_enabled, cash_collected_by FROM merchant_payment_profile WHERE merchant_id = $1');
export type ProfileRecord = typeof profile.$inferSelect;
export type ProfileView = Static<typeof ProfileOut>;
/** The fields a merchant edits. */
export type ProfileFields = Omit<ProfileView, 'merchant_id' | 'updated_by_user_id' | 'created_at' | 'updated_at'>;

export const profileOut = (p: ProfileRecord): ProfileView => ({
  merchant_id: p.merchantId,
  direct_payment_enabled: p.directPaymentEnabled,
  instructions: p.instructions,
  qr_storage_object_id: p.qrStorageObjectId,
  account_holder: p.accountHolder,
  bank_name: p.bankName,
  account_number_masked: p.accountNumberMasked,
  payment_reference_hint: p.paymentReferenceHint,
  cash_collected_by: p.cashCollectedBy,
  updated_by_user_id: p.updatedByUserId,
  created_at: p.createdAt,
  updated_at: p.updatedAt,
});

export async function findProfile(tx: Tx, merchantId: string): Promise<ProfileView | null> {
  const rows = await tx.orm.select().from(profile).where(eq(profile.merchantId, merchantId));
  return rows[0] ? profileOut(rows[0]) : null;
}

/** Creates or replaces the merchant's profile. */
export async function upsertProfile(
  tx: Tx,
  organizationId: string,
  merchantId: string,
  userId: string,
  f: ProfileFields,
): Promise<ProfileView> {
  const values = {
    directPaymentEnabled: f.direct_payment_enabled,
    instructions: f.instructions,
    qrStorageObjectId: f.qr_storage_object_id,
    accountHolder: f.account_holder,
    bankName: f.bank_name,
    accountNumberMasked: f.account_number_masked,
    paymentReferenceHint: f.payment_reference_hint,
    cashCollectedBy: f.cash_collected_by,
    updatedByUserId: userId,
  };
  const rows = await tx.orm
    .insert(profile)
    .values({ organizationId, merchantId, ...values })
    .onConflictDoUpdate({ target: [profile.organizationId, profile.merchantId], set: { ...values, updatedAt: sql`now()` } })
    .returning();
  return profileOut(rows[0]);
}

/** Whether the merchant accepts direct payments now (order creation: the statement text stays as it was). */
export async function directPaymentEnabled(tx: Tx, merchantId: string): Promise<boolean> {
  const { rowCount } = await tx.query(DIRECT_ENABLED, [merchantId]);
  return rowCount > 0;
}

/** Whether the storage object is the QR of a profile with direct payment enabled (anyone of the organization may read it). */
export async function isEnabledProfileQr(tx: Tx, objectId: string): Promise<boolean> {
  const rows = await tx.orm
    .select({ merchantId: profile.merchantId })
    .from(profile)
    .where(and(eq(profile.qrStorageObjectId, objectId), eq(profile.directPaymentEnabled, true)));
  return rows.length > 0;
}

/** Whether the merchant accepts direct payments now and who collects his cash orders (defaults without a profile); one statement per order. */
export async function paymentOptions(tx: Tx, merchantId: string): Promise<{ direct: boolean; cashCollectedBy: CollectedBy }> {
  const { rows } = await tx.query<{ direct_payment_enabled: boolean; cash_collected_by: CollectedBy }>(PAYMENT_OPTIONS, [merchantId]);
  return { direct: rows[0]?.direct_payment_enabled ?? false, cashCollectedBy: rows[0]?.cash_collected_by ?? 'driver' };
}
