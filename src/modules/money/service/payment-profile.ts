import { recordAudit } from '../../../platform/audit.js';
import type { Actor } from '../../../platform/auth.js';
import { AppError } from '../../../platform/errors.js';
import type { CollectedBy } from '../../commerce/index.js';
import { assertObjectLink } from '../../storage/index.js';
import type { MoneyContext } from '../context.js';
import { findProfile as loadProfile, type ProfileView, upsertProfile } from '../repo/profiles.js';
import { ownMerchant } from './ledger.js';

export interface ProfilePatch {
  direct_payment_enabled?: boolean;
  instructions?: string | null;
  qr_storage_object_id?: string | null;
  account_holder?: string | null;
  bank_name?: string | null;
  account_number?: string | null;
  payment_reference_hint?: string | null;
  cash_collected_by?: CollectedBy;
}

/** `****` and the last 4 characters: the only form of an account number the service keeps. */
export function maskAccountNumber(raw: string): string {
  const compact = raw.replace(/[\s-]/g, '');
  return `****${compact.slice(-4)}`;
}

const emptyProfile = (merchantId: string): ProfileView => ({
  merchant_id: merchantId,
  direct_payment_enabled: false,
  instructions: null,
  qr_storage_object_id: null,
  account_holder: null,
  bank_name: null,
  account_number_masked: null,
  payment_reference_hint: null,
  cash_collected_by: 'driver',
  updated_by_user_id: null,
  created_at: null,
  updated_at: null,
});

export function createPaymentProfileService(ctx: MoneyContext) {
  return {
    async getOwn(actor: Actor) {
      return ctx.db.withTenant(actor, async (tx) => {
        const m = await ownMerchant(ctx, tx, actor);
        return (await loadProfile(tx, m.id)) ?? emptyProfile(m.id);
      });
    },

    async patchOwn(actor: Actor, patch: ProfilePatch) {
      return ctx.db.withTenant(actor, async (tx) => {
        const m = await ownMerchant(ctx, tx, actor);
        const before = (await loadProfile(tx, m.id)) ?? emptyProfile(m.id);
        if (patch.qr_storage_object_id) await assertObjectLink(ctx, tx, actor, patch.qr_storage_object_id, ['merchant_payment_qr']);
        const next: ProfileView = { ...before };
        for (const k of [
          'direct_payment_enabled',
          'instructions',
          'qr_storage_object_id',
          'account_holder',
          'bank_name',
          'payment_reference_hint',
          'cash_collected_by',
        ] as const) {
          if (patch[k] !== undefined) (next as unknown as Record<string, unknown>)[k] = patch[k];
        }
        if (patch.account_number !== undefined)
          next.account_number_masked = patch.account_number === null ? null : maskAccountNumber(patch.account_number);
        if (next.direct_payment_enabled && !next.qr_storage_object_id && !next.account_number_masked && !next.instructions) {
          throw AppError.unprocessable('Direct payment needs a QR code, an account number or instructions', 'PAYMENT_PROFILE_INCOMPLETE');
        }
        const { merchant_id: _m, updated_by_user_id: _u0, created_at: _c0, updated_at: _t0, ...fields } = next;
        const saved = await upsertProfile(tx, actor.organizationId, m.id, actor.userId, fields);
        const { updated_by_user_id: _u, created_at: _c, updated_at: _t, ...b } = before;
        const { updated_by_user_id: _u2, created_at: _c2, updated_at: _t2, ...a } = saved;
        await recordAudit(tx, actor, {
          action: 'merchant_payment_profile.updated',
          entityType: 'merchant_payment_profile',
          entityId: m.id,
          before: b,
          after: a,
        });
        return saved;
      });
    },

    /** What a customer needs to pay a merchant directly; 404 unless direct payment is enabled. */
    async getForCustomer(actor: Actor, merchantId: string) {
      return ctx.db.withTenant(actor, async (tx) => {
        const m = await ctx.deps.logistics.getMerchant(tx, merchantId);
        const p = m && m.status === 'approved' ? await loadProfile(tx, merchantId) : null;
        if (!m || !p || !p.direct_payment_enabled) throw AppError.notFound('Payment profile');
        return { ...p, merchant_name: m.name };
      });
    },
  };
}
