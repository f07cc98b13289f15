import { Type } from '@sinclair/typebox';
import { actorOf, type Actor } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import type { CommerceContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { GeoPoint, parsePoint, pointSql } from '../../platform/geo.js';
import { newId } from '../../platform/ids.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { Nullable, Page, PageQueryProps, ShortText, Strict, Timestamp } from '../../platform/schemas.js';
import { geo, inTx } from './model.js';

export const AddressOut = Type.Object({
  id: Type.String(),
  label: Nullable(Type.String()),
  address: Type.String(),
  location: GeoPoint,
  notes: Nullable(Type.String()),
  created_at: Timestamp,
});

export interface AddressRow {
  id: string;
  user_id: string;
  label: string | null;
  address: string;
  lon: number;
  lat: number;
  notes: string | null;
  created_at: Date;
}

const ADDRESS_SELECT = 'SELECT id, user_id, label, address, (location)[0] AS lon, (location)[1] AS lat, notes, created_at FROM customer_address';
export const addressOut = ({ lon, lat, user_id: _u, ...a }: AddressRow) => ({ ...a, location: geo(lon, lat)! });

/** An address of this customer, or null (another customer's address is as missing as an unknown one). */
export async function customerAddress(tx: Tx, userId: string, id: string): Promise<AddressRow | null> {
  return (await tx.query<AddressRow>(`${ADDRESS_SELECT} WHERE id = $1 AND user_id = $2`, [id, userId])).rows[0] ?? null;
}

export async function createAddress(tx: Tx, actor: Actor, input: { label?: string; address: string; location: GeoPoint; notes?: string }): Promise<AddressRow> {
  const p = parsePoint(input.location);
  const id = newId();
  await tx.query('INSERT INTO customer_address (organization_id, id, user_id, label, address, location, notes) VALUES ($1, $2, $3, $4, $5, $6::point, $7)', [
    actor.organizationId,
    id,
    actor.userId,
    input.label ?? null,
    input.address,
    pointSql(p),
    input.notes ?? null,
  ]);
  return (await customerAddress(tx, actor.userId, id))!;
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
      return inTx(ctx, actor, async (tx) => {
        const { rows } = await tx.query<AddressRow>(`${ADDRESS_SELECT} WHERE user_id = $1 AND ($2::text IS NULL OR id < $2) ORDER BY id DESC LIMIT $3`, [
          actor.userId,
          page.after,
          page.limit + 1,
        ]);
        return toPage(rows, page, addressOut);
      });
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
        body: Strict({ label: Type.Optional(ShortText(60)), address: ShortText(300), location: GeoPoint, notes: Type.Optional(ShortText(500)) }),
        response: { 201: AddressOut },
      },
    },
    async (req, reply) => {
      const actor = actorOf(req);
      return reply.code(201).send(addressOut(await inTx(ctx, actor, (tx) => createAddress(tx, actor, req.body))));
    },
  );
}
