import * as repo from '../repo/express.js';
import { Actor } from '../../../platform/auth.js';
import { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { GeoPoint, LonLat, parsePoint, pointSql } from '../../../platform/geo.js';
import { newId } from '../../../platform/ids.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { normalizePhones } from '../../../platform/phone.js';
import { CommerceContext } from '../context.js';
import { findBranch } from '../repo/branches.js';
import { ExpressRow, NewExpress } from '../repo/express.js';
import { ExpressBody, ExpressOut } from '../schemas.js';
import { geo, ownMerchant } from './common.js';

import { validateWindow } from '../../logistics/index.js';
import { windowsLoadOf } from './checkout.js';
import { priceDelivery } from './tariffs.js';
import { Static } from '@sinclair/typebox';

export const expressOut = ({ pickup_lon, pickup_lat, dropoff_lon, dropoff_lat, ...r }: ExpressRow): Static<typeof ExpressOut> => ({
  ...r,
  pickup_location: geo(pickup_lon, pickup_lat),
  dropoff_location: geo(dropoff_lon, dropoff_lat),
});

type ExpressInput = typeof ExpressBody.static;

/** Where the courier picks up: the branch, else the given point and address, else the merchant's own location. */
async function resolvePickup(
  ctx: CommerceContext,
  tx: Tx,
  merchant: { id: string; address: string | null; lon: number | null; lat: number | null },
  b: ExpressInput,
) {
  if (b.branch_id) {
    const br = await findBranch(tx, b.branch_id);
    if (!br || br.merchant_id !== merchant.id) throw AppError.notFound('Branch');
    return { point: { lon: Number(br.lon), lat: Number(br.lat) }, address: b.pickup_address ?? br.address, territoryId: br.territory_id };
  }
  if (b.pickup_location) {
    if (!b.pickup_address)
      throw AppError.badRequest('pickup_address is required with pickup_location', [{ field: 'pickup_address', message: 'required' }]);
    return { point: parsePoint(b.pickup_location, 'pickup_location'), address: b.pickup_address, territoryId: null };
  }
  if (merchant.lon === null || merchant.lat === null || !merchant.address) {
    throw AppError.badRequest('The merchant has no location: send branch_id or pickup_location and pickup_address', [
      { field: 'branch_id', message: 'required' },
    ]);
  }
  return {
    point: { lon: Number(merchant.lon), lat: Number(merchant.lat) },
    address: b.pickup_address ?? merchant.address,
    territoryId: null,
  };
}

type SourceChannel = NewExpress['sourceChannel'];

/**
 * The merchant an express request is for: a merchant user's own; staff name one (`merchantId`, 404 MERCHANT_NOT_FOUND when
 * unknown). A merchant naming another merchant is 403.
 */
async function expressMerchant(ctx: CommerceContext, tx: Tx, actor: Actor, merchantId: string | null) {
  if (actor.kind === 'comercio') {
    const own = await ownMerchant(ctx, tx, actor);
    if (merchantId && merchantId !== own.id) throw AppError.forbidden('A merchant may only request express deliveries for himself');
    return own;
  }
  const m = merchantId ? await ctx.deps.logistics.getMerchant(tx, merchantId) : null;
  if (!m) throw new AppError(404, 'MERCHANT_NOT_FOUND', 'Merchant not found');
  return m;
}

/** An express request and its trip, in the caller's transaction: a merchant's own, or staff's for `merchantId`. */
async function requestExpress(
  ctx: CommerceContext,
  tx: Tx,
  actor: Actor,
  b: ExpressInput,
  sourceChannel: SourceChannel = 'core',
  merchantId: string | null = null,
): Promise<ExpressRow> {
  const m = await expressMerchant(ctx, tx, actor, merchantId);
  if (m.status !== 'approved') throw AppError.unprocessable('The merchant is not approved', 'MERCHANT_NOT_APPROVED');
  // the trip's rules for its windows and load, before anything is written
  const window = validateWindow(b.deliver_after ?? null, b.deliver_before ?? null, new Date());
  const windowsLoad = windowsLoadOf(b, window.before);
  b = await normalizePhones(tx, actor.organizationId, b, ['customer_phone']);
  const pickup = await resolvePickup(ctx, tx, m, b);
  const dropoff: LonLat = parsePoint(b.dropoff_location, 'dropoff_location');
  const territoryId = pickup.territoryId ?? (await ctx.deps.logistics.territoryForPoint(tx, pickup.point));
  const price = await priceDelivery(ctx, tx, actor.organizationId, territoryId, 'delivery_express', pickup.point, dropoff);
  const id = newId();
  await repo.insertExpress(tx, {
    organizationId: actor.organizationId,
    id,
    territoryId,
    merchantId: m.id,
    branchId: b.branch_id ?? null,
    requestedByUserId: actor.userId,
    customerName: b.customer_name,
    customerPhone: b.customer_phone ?? null,
    pickupAddress: pickup.address,
    dropoffAddress: b.dropoff_address,
    pickupPoint: pointSql(pickup.point),
    dropoffPoint: pointSql(dropoff),
    packageDescription: b.package_description ?? null,
    declaredValue: b.declared_value ?? '0',
    deliveryFee: price.fee,
    sourceChannel,
    deliverAfter: window.after,
    deliverBefore: window.before,
    pickupAfter: windowsLoad.pickup_after,
    pickupBefore: windowsLoad.pickup_before,
    units: windowsLoad.units,
    weightKg: windowsLoad.weight_kg,
    volumeL: windowsLoad.volume_l,
  });
  // The trip.created hook moves the request to `created` and records trip_id, in this transaction.
  await ctx.deps.logistics.createTrip(
    tx,
    actor,
    {
      recipient_phone: b.customer_phone ?? null,
      recipient_name: b.customer_name,
      pickup: pickup.point,
      pickup_address: pickup.address,
      dropoff,
      dropoff_address: b.dropoff_address,
      merchant_id: m.id,
      express_request_id: id,
      service_mode: 'delivery_express',
      source_channel: sourceChannel,
      ...(territoryId ? { territory_id: territoryId } : {}),
      delivery_fee: price.fee,
      driver_earning: price.driver_earning,
      notes: [b.package_description, `for ${b.customer_name}${b.customer_phone ? ` ${b.customer_phone}` : ''}`].filter(Boolean).join(' · '),
      deliver_after: window.after,
      deliver_before: window.before,
      ...windowsLoad,
    },
    { pricedBy: 'tariff' },
  );
  const row = (await repo.findExpress(tx, id))!;
  await ctx.deps.chat.enqueueOrderCreated(tx, {
    organizationId: actor.organizationId,
    merchantId: m.id,
    expressRequestId: id,
    territoryId,
    summary: `Express delivery for ${row.customer_name} to ${row.dropoff_address}, fee ${row.delivery_fee}`,
    data: {
      express_request_id: id,
      customer_name: row.customer_name,
      dropoff_address: row.dropoff_address,
      delivery_fee: row.delivery_fee,
    },
  });
  // The recipient has no account: his tracking link (status, driver, delivery PIN) goes to his phone with the
  // recipient messages' order confirmation (the link's issue fires it, in this transaction).
  return row;
}

/** The trip states before the courier has the package: a request may still change or be cancelled by its merchant. */
const BEFORE_PICKUP = ['pending', 'assigned', 'accepted'];

/** The caller's own express request, locked, still before pickup (404 for another merchant's, 409 EXPRESS_PICKED_UP after). */
async function ownBeforePickup(ctx: CommerceContext, tx: Tx, actor: Actor, id: string) {
  const m = await ownMerchant(ctx, tx, actor);
  const r = await repo.lockExpress(tx, id);
  if (!r || r.merchant_id !== m.id) throw AppError.notFound('Express request');
  const trip = r.trip_id ? await ctx.deps.logistics.getTrip(tx, r.trip_id) : null;
  const open = (r.status === 'requested' || r.status === 'created') && (!trip || BEFORE_PICKUP.includes(trip.status));
  return { r, trip, open };
}

export interface ExpressRevision {
  customer_name?: string;
  customer_phone?: string | null;
  dropoff_address?: string;
  dropoff_location?: GeoPoint;
  package_description?: string | null;
  declared_value?: string;
}

/**
 * Express requests for other modules (shop webhooks, spreadsheet imports), acting as the merchant's user or as staff for a merchant: created like POST
 * /merchant/delivery-express with their source channel; changed or cancelled while the courier has not picked the
 * package up (after that 409 EXPRESS_PICKED_UP, nothing changes). A cancellation cancels the trip, and the request
 * follows it as for any cancelled trip. The fee stays the one quoted at creation.
 */
export function createExpressApi(ctx: CommerceContext) {
  return {
    /** As the merchant's user, or as staff for the merchant `merchantId` (spreadsheet imports). */
    async request(
      tx: Tx,
      actor: Actor,
      body: ExpressInput,
      sourceChannel: SourceChannel,
      merchantId: string | null = null,
    ): Promise<Static<typeof ExpressOut>> {
      return expressOut(await requestExpress(ctx, tx, actor, body, sourceChannel, merchantId));
    },
    /** Whether the branch is the merchant's (a pickup for requests made for him). */
    async ownsBranch(tx: Tx, merchantId: string, branchId: string): Promise<boolean> {
      return (await findBranch(tx, branchId))?.merchant_id === merchantId;
    },
    async get(tx: Tx, id: string): Promise<Static<typeof ExpressOut> | null> {
      const r = await repo.findExpress(tx, id);
      return r ? expressOut(r) : null;
    },
    async revise(tx: Tx, actor: Actor, id: string, change: ExpressRevision): Promise<Static<typeof ExpressOut>> {
      const { r, trip, open } = await ownBeforePickup(ctx, tx, actor, id);
      if (!open)
        throw AppError.conflict('The package was already picked up or the request ended', 'EXPRESS_PICKED_UP', { status: r.status });
      const c = await normalizePhones(tx, actor.organizationId, change, ['customer_phone']);
      const dropoff = c.dropoff_location ? parsePoint(c.dropoff_location, 'dropoff_location') : null;
      await repo.reviseExpress(tx, r.id, {
        customerName: c.customer_name ?? null,
        customerPhone: c.customer_phone ?? null,
        dropoffAddress: c.dropoff_address ?? null,
        dropoffPoint: dropoff ? pointSql(dropoff) : null,
        packageDescription: c.package_description ?? null,
        declaredValue: c.declared_value ?? null,
      });
      const moved = (c.dropoff_address !== undefined && c.dropoff_address !== r.dropoff_address) || dropoff !== null;
      if (trip && moved) {
        await ctx.deps.logistics.updateTripCoordinates(tx, actor, trip.id, {
          ...(c.dropoff_address !== undefined ? { dropoff_address: c.dropoff_address } : {}),
          ...(c.dropoff_location ? { dropoff_location: c.dropoff_location } : {}),
        });
      }
      return expressOut((await repo.findExpress(tx, r.id))!);
    },
    async cancel(tx: Tx, actor: Actor, id: string, reason: string): Promise<Static<typeof ExpressOut>> {
      const { r, trip, open } = await ownBeforePickup(ctx, tx, actor, id);
      if (r.status === 'cancelled') return expressOut(r);
      if (!open)
        throw AppError.conflict('The package was already picked up or the request ended', 'EXPRESS_PICKED_UP', { status: r.status });
      // The request follows its trip (trip.cancelled), in this transaction.
      if (trip) await ctx.deps.logistics.cancelTrip(tx, actor, trip.id, reason);
      return expressOut((await repo.findExpress(tx, r.id))!);
    },
  };
}
export type ExpressApi = ReturnType<typeof createExpressApi>;
export type { ExpressInput };

/** GET /merchant/delivery-express. */
export function listOwnExpress(ctx: CommerceContext, actor: Actor, q: { status?: ExpressRow['status']; limit?: number; cursor?: string }) {
  const page = pageRequest(q);
  return ctx.db.withTenant(actor, async (tx) => {
    const m = await ownMerchant(ctx, tx, actor);
    return toPage(await repo.listExpress(tx, m.id, { status: q.status, after: page.after, limit: page.limit + 1 }), page, expressOut);
  });
}

/** POST /merchant/delivery-express: the request and its trip in one transaction. */
export function addExpress(ctx: CommerceContext, actor: Actor, body: ExpressInput) {
  return ctx.db.withTenant(actor, (tx) => requestExpress(ctx, tx, actor, body));
}
