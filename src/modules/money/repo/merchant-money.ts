import type { Static } from '@sinclair/typebox';
import type { Tx } from '../../../platform/db/index.js';
import type { MerchantSettlementOut } from '../merchant-money.js';

/** The settlements the worker wrote for one merchant (settled and skipped periods), newest first, `limit` rows after the cursor id. */
export async function listMerchantSettlements(
  tx: Tx,
  merchantId: string,
  f: { status: 'settled' | 'skipped' | null; after: string | null; limit: number },
): Promise<Static<typeof MerchantSettlementOut>[]> {
  const { rows } = await tx.query<Static<typeof MerchantSettlementOut>>(
    `SELECT id, merchant_id, period_start, period_end, status, gross_amount, debt_netted, payout_amount, currency, created_at
       FROM merchant_settlement
      WHERE merchant_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR id < $3)
      ORDER BY id DESC LIMIT $4`,
    [merchantId, f.status, f.after, f.limit],
  );
  return rows;
}
