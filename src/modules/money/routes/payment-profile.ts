import { Type } from '@sinclair/typebox';
import { actorOf } from '../../../platform/auth.js';
import type { Api } from '../../../platform/context.js';
import { Id, IdParams, Nullable, ShortText, Strict } from '../../../platform/schemas.js';
import type { MoneyContext } from '../context.js';
import { CollectedBySchema, CustomerProfileOut, ProfileOut } from '../schemas.js';
import { createPaymentProfileService, type ProfilePatch } from '../service/payment-profile.js';

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
