import { actorOf } from '../../../platform/auth.js';
import { Api } from '../../../platform/context.js';
import { GeoPoint } from '../../../platform/geo.js';
import { pageRequest } from '../../../platform/pagination.js';
import { Page, PageQueryProps, ShortText, Strict } from '../../../platform/schemas.js';
import { CommerceContext } from '../context.js';
import { AddressOut } from '../schemas.js';
import { addAddress, addressOut, listOwnAddresses } from '../service/addresses.js';
import { Type } from '@sinclair/typebox';

export function addressRoutes(app: Api, ctx: CommerceContext) {
  const customerOnly = { auth: { roles: ['delivery' as const] } };

  app.get(
    '/customer/addresses',
    {
      config: customerOnly,
      schema: {
        operationId: 'listCustomerAddresses',
        tags: ['customer'],
        summary: "The calling customer's delivery addresses, newest first",
        querystring: Strict(PageQueryProps),
        response: { 200: Page(AddressOut) },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      const page = pageRequest(req.query);
      return listOwnAddresses(ctx, actor, page);
    },
  );

  app.post(
    '/customer/addresses',
    {
      config: customerOnly,
      schema: {
        operationId: 'createCustomerAddress',
        tags: ['customer'],
        summary: 'Save a delivery address (GeoJSON point + text) for the calling customer',
        body: Strict({
          label: Type.Optional(ShortText(60)),
          address: ShortText(300),
          location: GeoPoint,
          notes: Type.Optional(ShortText(500)),
        }),
        response: { 201: AddressOut },
      },
    },
    async (req, reply) => {
      const actor = actorOf(req);
      return reply.code(201).send(addressOut(await addAddress(ctx, actor, req.body)));
    },
  );
}
