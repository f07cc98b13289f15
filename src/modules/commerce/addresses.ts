import { Type, type Static } from '@sinclair/typebox';
import { actorOf, type Actor } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import type { CommerceContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { GeoPoint, parsePoint, pointSql } from '../../platform/geo.js';
import { newId } from '../../platform/ids.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { Nullable, Page, PageQueryProps, ShortText, Strict, Timestamp } from '../../platform/schemas.js';
import { geo } from './model.js';
import * as repo from './repo/addresses.js';
import type { AddressRow } from './repo/addresses.js';

export const AddressOut = Type.Object({
  id: Type.String(),
  label: Nullable(Type.String()),
  address: Type.String(),
  location: GeoPoint,
  notes: Nullable(Type.String()),
  created_at: Timestamp,
});

export type { AddressRow };

export const addressOut = ({ lon, lat, user_id: _u, ...a }: AddressRow): Static<typeof AddressOut> => ({ ...a, location: geo(lon, lat)! });

/** An address of this customer, or null (another customer's address is as missing as an unknown one). */
export const customerAddress = repo.findCustomerAddress;

export async function createAddress(
  tx: Tx,
  actor: Actor,
  input: { label?: string; address: string; location: GeoPoint; notes?: string },
): Promise<AddressRow> {
  const p = parsePoint(input.location);
  const id = newId();
  await repo.insertAddress(tx, {
    organizationId: actor.organizationId,
    id,
    userId: actor.userId,
    label: input.label ?? null,
    address: input.address,
    point: pointSql(p),
    notes: input.notes ?? null,
  });
  return (await customerAddress(tx, actor.userId, id))!;
}

/** GET /customer/addresses: the caller's addresses, newest first. */
function listOwnAddresses(ctx: CommerceContext, actor: Actor, page: { after: string | null; limit: number }) {
  return ctx.db.withTenant(actor, async (tx) =>
    toPage(await repo.listCustomerAddresses(tx, actor.userId, { after: page.after, limit: page.limit + 1 }), page, addressOut),
  );
}

/** POST /customer/addresses. */
function addAddress(ctx: CommerceContext, actor: Actor, input: Parameters<typeof createAddress>[2]) {
  return ctx.db.withTenant(actor, (tx) => createAddress(tx, actor, input));
}

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
