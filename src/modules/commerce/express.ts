import { normalizePhones } from '../../platform/phone.js';
import { Type } from '@sinclair/typebox';
import { actorOf, type Actor } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import type { CommerceContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { GeoPoint, parsePoint, pointSql, type LonLat } from '../../platform/geo.js';
import { newId } from '../../platform/ids.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { Id, Money, NonNegativeMoney, Nullable, Page, PageQueryProps, Phone, ShortText, Strict, Timestamp } from '../../platform/schemas.js';
import { loadBranch } from './branches.js';
import { ExpressStatusSchema, geo, inTx, ownMerchant } from './model.js';
import { EXPRESS_STATUSES } from './tables.js';
import { priceDelivery } from './tariffs.js';

export const ExpressOut = Type.Object({
  id: Type.String(),
  status: ExpressStatusSchema,
  territory_id: Nullable(Type.String()),
  merchant_id: Type.String(),
  branch_id: Nullable(Type.String()),
  requested_by_user_id: Nullable(Type.String()),
  customer_name: Type.String(),
  customer_phone: Nullable(Type.String()),
  pickup_address: Type.String(),
  dropoff_address: Type.String(),
  pickup_location: Nullable(GeoPoint),
  dropoff_location: Nullable(GeoPoint),
  package_description: Nullable(Type.String()),
  declared_value: Money,
  delivery_fee: Money,
  source_channel: Type.String(),
  trip_id: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

interface ExpressRow {
  id: string;
  status: (typeof EXPRESS_STATUSES)[number];
  territory_id: string | null;
  merchant_id: string;
  branch_id: string | null;
  requested_by_user_id: string | null;
  customer_name: string;
  customer_phone: string | null;
  pickup_address: string;
  dropoff_address: string;
  pickup_lon: number | null;
  pickup_lat: number | null;
  dropoff_lon: number | null;
  dropoff_lat: number | null;
  package_description: string | null;
  declared_value: string;
  delivery_fee: string;
  source_channel: string;
  trip_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const EXPRESS_SELECT = `SELECT id, status, territory_id, merchant_id, branch_id, requested_by_user_id, customer_name, customer_phone, pickup_address, dropoff_address,
  (pickup_location)[0] AS pickup_lon, (pickup_location)[1] AS pickup_lat, (dropoff_location)[0] AS dropoff_lon, (dropoff_location)[1] AS dropoff_lat,
  package_description, declared_value, delivery_fee, source_channel, trip_id, created_at, updated_at FROM delivery_express_request`;

const expressOut = ({ pickup_lon, pickup_lat, dropoff_lon, dropoff_lat, ...r }: ExpressRow) => ({
  ...r,
  pickup_location: geo(pickup_lon, pickup_lat),
  dropoff_location: geo(dropoff_lon, dropoff_lat),
});

const ExpressBody = Strict({
  branch_id: Type.Optional(Id),
  pickup_location: Type.Optional(GeoPoint),
  pickup_address: Type.Optional(ShortText(300)),
  customer_name: ShortText(120),
  customer_phone: Type.Optional(Phone),
  dropoff_address: ShortText(300),
  dropoff_location: GeoPoint,
  package_description: Type.Optional(ShortText(1000)),
  declared_value: Type.Optional(NonNegativeMoney),
});
type ExpressInput = typeof ExpressBody.static;

/** Where the courier picks up: the branch, else the given point and address, else the merchant's own location. */
async function resolvePickup(ctx: CommerceContext, tx: Tx, merchant: { id: string; address: string | null; lon: number | null; lat: number | null }, b: ExpressInput) {
  if (b.branch_id) {
    const br = await loadBranch(tx, b.branch_id);
    if (!br || br.merchant_id !== merchant.id) throw AppError.notFound('Branch');
    return { point: { lon: Number(br.lon), lat: Number(br.lat) }, address: b.pickup_address ?? br.address, territoryId: br.territory_id };
  }
  if (b.pickup_location) {
    if (!b.pickup_address) throw AppError.badRequest('pickup_address is required with pickup_location', [{ field: 'pickup_address', message: 'required' }]);
    return { point: parsePoint(b.pickup_location, 'pickup_location'), address: b.pickup_address, territoryId: null };
  }
  if (merchant.lon === null || merchant.lat === null || !merchant.address) {
    throw AppError.badRequest('The merchant has no location: send branch_id or pickup_location and pickup_address', [{ field: 'branch_id', message: 'required' }]);
  }
  return { point: { lon: Number(merchant.lon), lat: Number(merchant.lat) }, address: b.pickup_address ?? merchant.address, territoryId: null };
}

async function requestExpress(ctx: CommerceContext, tx: Tx, actor: Actor, b: ExpressInput): Promise<ExpressRow> {
  const m = await ownMerchant(ctx, tx, actor);
  if (m.status !== 'approved') throw AppError.unprocessable('The merchant is not approved', 'MERCHANT_NOT_APPROVED');
  b = await normalizePhones(tx, actor.organizationId, b, ['customer_phone']);
  const pickup = await resolvePickup(ctx, tx, m, b);
  const dropoff: LonLat = parsePoint(b.dropoff_location, 'dropoff_location');
  const territoryId = pickup.territoryId ?? (await ctx.deps.logistics.territoryForPoint(tx, pickup.point));
  const price = await priceDelivery(ctx, tx, actor.organizationId, territoryId, 'delivery_express', pickup.point, dropoff);
  const id = newId();
  await tx.query(
    `INSERT INTO delivery_express_request (organization_id, id, territory_id, merchant_id, branch_id, requested_by_user_id, customer_name, customer_phone,
                                           pickup_address, dropoff_address, pickup_location, dropoff_location, package_description, declared_value, delivery_fee)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::point, $12::point, $13, $14, $15)`,
    [
      actor.organizationId, id, territoryId, m.id, b.branch_id ?? null, actor.userId, b.customer_name, b.customer_phone ?? null, pickup.address,
      b.dropoff_address, pointSql(pickup.point), pointSql(dropoff), b.package_description ?? null, b.declared_value ?? '0', price.fee,
    ],
  );
  // The trip.created hook moves the request to `created` and records trip_id, in this transaction.
  const trip = await ctx.deps.logistics.createTrip(tx, actor, {
    recipient_phone: b.customer_phone ?? null,
    pickup: pickup.point,
    pickup_address: pickup.address,
    dropoff,
    dropoff_address: b.dropoff_address,
    merchant_id: m.id,
    express_request_id: id,
    service_mode: 'delivery_express',
    source_channel: 'core',
    ...(territoryId ? { territory_id: territoryId } : {}),
    delivery_fee: price.fee,
    driver_earning: price.driver_earning,
    notes: [b.package_description, `for ${b.customer_name}${b.customer_phone ? ` ${b.customer_phone}` : ''}`].filter(Boolean).join(' · '),
  }, { pricedBy: 'tariff' });
  const row = (await tx.query<ExpressRow>(`${EXPRESS_SELECT} WHERE id = $1`, [id])).rows[0];
  await ctx.deps.chat.enqueueOrderCreated(tx, {
    organizationId: actor.organizationId,
    merchantId: m.id,
    expressRequestId: id,
    territoryId,
    summary: `Express delivery for ${row.customer_name} to ${row.dropoff_address}, fee ${row.delivery_fee}`,
    data: { express_request_id: id, customer_name: row.customer_name, dropoff_address: row.dropoff_address, delivery_fee: row.delivery_fee },
  });
  // The recipient has no account: his tracking link (status, driver, delivery PIN) goes to his phone.
  const url = await ctx.deps.logistics.recipientLinkUrl(tx, trip.id);
  if (url && row.customer_phone) {
    await ctx.deps.chat.enqueueRecipientLink(tx, { organizationId: actor.organizationId, merchantId: m.id, expressRequestId: id, territoryId, destinationPhone: row.customer_phone, url });
  }
  return row;
}

export function expressRoutes(app: Api, ctx: CommerceContext) {
  app.get(
    '/merchant/delivery-express',
    {
      config: { auth: { roles: ['comercio'] } },
      schema: {
        operationId: 'listDeliveryExpress',
        tags: ['merchant'],
        summary: "The calling merchant's express delivery requests, newest first",
        querystring: Strict({ ...PageQueryProps, status: Type.Optional(ExpressStatusSchema) }),
        response: { 200: Page(ExpressOut) },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      const page = pageRequest(req.query);
      return inTx(ctx, actor, async (tx) => {
        const m = await ownMerchant(ctx, tx, actor);
        const { rows } = await tx.query<ExpressRow>(
          `${EXPRESS_SELECT} WHERE merchant_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR id < $3) ORDER BY id DESC LIMIT $4`,
          [m.id, req.query.status ?? null, page.after, page.limit + 1],
        );
        return toPage(rows, page, expressOut);
      });
    },
  );

  app.post(
    '/merchant/delivery-express',
    {
      config: { auth: { roles: ['comercio'] } },
      schema: {
        operationId: 'requestDeliveryExpress',
        tags: ['merchant'],
        summary: 'Request a courier for a package: creates the request and its trip (service_mode delivery_express) in one transaction',
        description:
          'Pickup: the branch (branch_id), else pickup_location + pickup_address, else the merchant location. The fee comes from the express tariff of the ' +
          "pickup territory (organization default without one); it is never taken from the client. Status requested → created (trip exists) → completed | " +
          'cancelled, following the trip. 422 MERCHANT_NOT_APPROVED; 404 for another merchant\'s branch.',
        body: ExpressBody,
        response: { 201: ExpressOut },
      },
    },
    async (req, reply) => {
      const actor = actorOf(req);
      return reply.code(201).send(expressOut(await inTx(ctx, actor, (tx) => requestExpress(ctx, tx, actor, req.body))));
    },
  );
}
