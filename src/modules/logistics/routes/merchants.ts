import { Type } from '@sinclair/typebox';
import { actorOf } from '../../../platform/auth.js';
import type { Api, AppContext } from '../../../platform/context.js';
import { GeoPoint } from '../../../platform/geo.js';
import { Id, IdParams, IdWith, Page, PageQueryProps, Phone, ShortText, Strict } from '../../../platform/schemas.js';
import { merchantOut } from '../service/mappers.js';
import { ApprovalStatusSchema, MerchantOut, ReasonBody } from '../schemas.js';
import type { MerchantService } from '../service/merchants.js';

export function merchantRoutes(app: Api, _ctx: AppContext, svc: MerchantService) {
  const merchants = svc.requests;

  app.get(
    '/merchants',
    {
      config: { auth: { roles: ['administrator', 'dispatch', 'subadmin'], permission: 'merchants_view' } },
      schema: {
        operationId: 'listMerchants',
        tags: ['logistics'],
        summary: 'Merchants (sub-administrators: only those in their territories)',
        querystring: Strict({ ...PageQueryProps, status: Type.Optional(ApprovalStatusSchema), territory_id: Type.Optional(Id) }),
        response: { 200: Page(MerchantOut) },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      return merchants.list(actor, req.query);
    },
  );

  app.post(
    '/merchants',
    {
      config: { auth: { roles: ['administrator', 'subadmin', 'comercio'], permission: 'merchants_create' } },
      schema: {
        operationId: 'createMerchant',
        tags: ['logistics'],
        summary: 'Create a merchant (status pending) for a comercio user; a comercio user may register himself',
        description:
          'owner_user_id must be a `comercio` user (422 USER_NOT_MERCHANT); one merchant per user (409 MERCHANT_EXISTS). Without territory_id the ' +
          'territory is the oldest active one covering `location`. commission_percent defaults to 10.00 and only staff may set it.',
        body: Strict({
          owner_user_id: Type.Optional(
            IdWith(
              'required for staff (missing: 400 VALIDATION_FAILED); a comercio user registering himself omits it or sends his own id (another: 403)',
            ),
          ),
          name: ShortText(120),
          phone: Type.Optional(Phone),
          address: Type.Optional(ShortText(300)),
          location: Type.Optional(GeoPoint),
          territory_id: Type.Optional(Id),
          commission_percent: Type.Optional(Type.String({ pattern: '^\\d{1,3}(\\.\\d{1,2})?$' })),
        }),
        response: { 201: MerchantOut },
      },
    },
    async (req, reply) => {
      const actor = actorOf(req);
      return reply.code(201).send(merchantOut(await merchants.create(actor, req.body)));
    },
  );

  const ACTIONS = {
    approve: 'Approve a merchant: pending → approved',
    reject: 'Reject a merchant: pending → rejected (final)',
    suspend:
      'Suspend a merchant: approved → suspended. The customer marketplace hides it (with its branches and items), checkout and new orders answer ' +
      '422 MERCHANT_NOT_APPROVED, and no new trips or express requests are created for it; orders and trips already under way continue',
    reactivate: 'Reactivate a suspended merchant: suspended → approved',
  } as const;
  for (const action of ['approve', 'reject', 'suspend', 'reactivate'] as const) {
    app.post(
      `/merchants/:id/${action}`,
      {
        config: { auth: { roles: ['administrator', 'subadmin'], permission: 'merchants_approve' } },
        schema: {
          operationId: `${action}Merchant`,
          tags: ['logistics'],
          summary: `${ACTIONS[action].split(':')[0]}; 409 INVALID_TRANSITION from any other state; audited`,
          description: `${ACTIONS[action]}. \`reason\` is kept as status_reason. Sub-administrators: only merchants in their territories (404 otherwise).`,
          params: IdParams,
          body: ReasonBody,
          response: { 200: MerchantOut },
        },
      },
      async (req) => {
        const actor = actorOf(req);
        return merchantOut(await merchants.decide(actor, req.params.id, action, req.body?.reason));
      },
    );
  }
}
