import { Type } from '@sinclair/typebox';
import { actorOf, type Actor } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import type { Api } from '../../platform/context.js';
import type { MoneyContext } from './index.js';
import { AppError } from '../../platform/errors.js';
import { Id, IdParams, Nullable, ShortText, Strict, Timestamp } from '../../platform/schemas.js';
import { assertObjectLink } from '../../platform/storage-links.js';
import { ownMerchant } from './model.js';
import { findProfile as loadProfile, upsertProfile, type ProfileView } from './repo/profiles.js';

export interface ProfilePatch {
  direct_payment_enabled?: boolean;
  instructions?: string | null;
  qr_storage_object_id?: string | null;
  account_holder?: string | null;
  bank_name?: string | null;
  account_number?: string | null;
  payment_reference_hint?: string | null;
  cash_collected_by?: 'driver' | 'merchant';
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

const CollectedBySchema = Type.Union([Type.Literal('driver'), Type.Literal('merchant')], {
  description:
    "Who takes the cash of this merchant's cash orders at the door: `driver` (default: the platform's driver collects it, the merchant's net is pending until the driver remits the cash, then available) " +
    'or `merchant` (his own staff collect it: no sale credit, the commission and delivery fee are his debt). Applies to orders placed afterwards.',
});

const ProfileFields = {
  merchant_id: Type.String(),
  direct_payment_enabled: Type.Boolean(),
  instructions: Nullable(Type.String()),
  qr_storage_object_id: Nullable(Type.String({ description: 'private storage object of purpose `merchant_payment_qr`' })),
  account_holder: Nullable(Type.String()),
  bank_name: Nullable(Type.String()),
  account_number_masked: Nullable(Type.String({ description: 'masked only, e.g. `****1234`; the full number is never stored' })),
  payment_reference_hint: Nullable(Type.String()),
  cash_collected_by: CollectedBySchema,
};
export const ProfileOut = Type.Object({
  ...ProfileFields,
  updated_by_user_id: Nullable(Type.String()),
  created_at: Nullable(Timestamp),
  updated_at: Nullable(Timestamp),
});
const CustomerProfileOut = Type.Object({ ...ProfileFields, merchant_name: Type.String() });

export function paymentProfileRoutes(app: Api, ctx: MoneyContext) {
  const svc = createPaymentProfileService(ctx);
  app.get(
    '/merchant/payment-profile',
    {
      config: { auth: { roles: ['comercio'] } },
      schema: {
        operationId: 'getMerchantPaymentProfile',
        tags: ['payments'],
        summary: "The calling merchant's direct-payment profile (defaults with null timestamps when never saved)",
        response: { 200: ProfileOut },
      },
    },
    async (req) => svc.getOwn(actorOf(req)),
  );
  app.patch(
    '/merchant/payment-profile',
    {
      config: { auth: { roles: ['comercio'] } },
      schema: {
        operationId: 'updateMerchantPaymentProfile',
        tags: ['payments'],
        summary: 'Creates or updates the direct-payment profile',
        description:
          '`account_number` is accepted here and stored and returned only masked (`****` + last 4). `qr_storage_object_id` must be a storage object ' +
          'of purpose `merchant_payment_qr` (422 otherwise). Enabling direct payment needs a QR, an account number or instructions (422 PAYMENT_PROFILE_INCOMPLETE). ' +
          'null clears a field.',
        body: Strict(
          {
            direct_payment_enabled: Type.Optional(Type.Boolean()),
            instructions: Type.Optional(Nullable(ShortText(2000))),
            qr_storage_object_id: Type.Optional(Nullable(Id)),
            account_holder: Type.Optional(Nullable(ShortText(200))),
            bank_name: Type.Optional(Nullable(ShortText(200))),
            account_number: Type.Optional(
              Nullable(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9 -]{3,40}$', description: 'write-only; stored masked' })),
            ),
            payment_reference_hint: Type.Optional(Nullable(ShortText(200))),
            cash_collected_by: Type.Optional(CollectedBySchema),
          },
          { minProperties: 1 },
        ),
        response: { 200: ProfileOut },
      },
    },
    async (req) => svc.patchOwn(actorOf(req), req.body as ProfilePatch),
  );
  app.get(
    '/customer/merchants/:id/payment-profile',
    {
      config: { auth: { roles: ['delivery', 'administrator'] } },
      schema: {
        operationId: 'getMerchantPaymentProfileForCustomer',
        tags: ['payments'],
        summary: "A merchant's direct-payment details for the customer; 404 unless the merchant is approved and direct payment is enabled",
        params: IdParams,
        response: { 200: CustomerProfileOut },
      },
    },
    async (req) => svc.getForCustomer(actorOf(req), req.params.id),
  );
}
