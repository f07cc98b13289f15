import * as repo from '../repo/addresses.js';
import { Actor } from '../../../platform/auth.js';
import { Tx } from '../../../platform/db/index.js';
import { GeoPoint, parsePoint, pointSql } from '../../../platform/geo.js';
import { newId } from '../../../platform/ids.js';
import { toPage } from '../../../platform/pagination.js';
import { CommerceContext } from '../context.js';
import { AddressRow } from '../repo/addresses.js';
import { AddressOut } from '../schemas.js';
import { geo } from './common.js';
import { Static } from '@sinclair/typebox';

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
export function listOwnAddresses(ctx: CommerceContext, actor: Actor, page: { after: string | null; limit: number }) {
  return ctx.db.withTenant(actor, async (tx) =>
    toPage(await repo.listCustomerAddresses(tx, actor.userId, { after: page.after, limit: page.limit + 1 }), page, addressOut),
  );
}

/** POST /customer/addresses. */
export function addAddress(ctx: CommerceContext, actor: Actor, input: Parameters<typeof createAddress>[2]) {
  return ctx.db.withTenant(actor, (tx) => createAddress(tx, actor, input));
}
