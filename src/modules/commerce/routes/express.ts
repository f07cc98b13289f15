import { actorOf } from '../../../platform/auth.js';
import { Api } from '../../../platform/context.js';
import { Page, PageQueryProps, Strict } from '../../../platform/schemas.js';
import { CommerceContext } from '../context.js';
import { ExpressBody, ExpressOut, ExpressStatusSchema } from '../schemas.js';
import { addExpress, expressOut, listOwnExpress } from '../service/express.js';
import { Type } from '@sinclair/typebox';

export function expressRoutes(app: Api, ctx: CommerceContext) {
  app.get(
    '/merchant/delivery-express',
    {
      config: { auth: { roles: ['comercio'], apiKeyScope: 'express:read' } },
      schema: {
        operationId: 'listDeliveryExpress',
        tags: ['merchant'],
        summary: "The calling merchant's express delivery requests, newest first",
        querystring: Strict({ ...PageQueryProps, status: Type.Optional(ExpressStatusSchema) }),
        response: { 200: Page(ExpressOut) },
      },
    },
    async (req) => {
      return listOwnExpress(ctx, actorOf(req), req.query);
    },
  );

  app.post(
    '/merchant/delivery-express',
    {
      config: { auth: { roles: ['comercio'], apiKeyScope: 'express:write' } },
      schema: {
        operationId: 'requestDeliveryExpress',
        tags: ['merchant'],
        summary: 'Request a courier for a package: creates the request and its trip (service_mode delivery_express) in one transaction',
        description:
          'Pickup: the branch (branch_id), else pickup_location + pickup_address, else the merchant location. The fee comes from the express tariff of the ' +
          'pickup territory (organization default without one); it is never taken from the client. Status requested → created (trip exists) → completed | ' +
          "cancelled, following the trip. 422 MERCHANT_NOT_APPROVED; 404 for another merchant's branch.",
        body: ExpressBody,
        response: { 201: ExpressOut },
      },
    },
    async (req, reply) => {
      const actor = actorOf(req);
      return reply.code(201).send(expressOut(await addExpress(ctx, actor, req.body)));
    },
  );
}
