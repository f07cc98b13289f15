import { normalizePhones } from '../../platform/phone.js';
import { Type, type Static } from '@sinclair/typebox';
import { actorOf, type Actor } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import type { CommerceContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { GeoPoint, parsePoint, pointSql } from '../../platform/geo.js';
import { newId } from '../../platform/ids.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { IdParams, Nullable, Page, PageQueryProps, Phone, ShortText, Strict, Timestamp } from '../../platform/schemas.js';
import { recordAudit } from '../../platform/audit.js';
import { geo, ownMerchant, PreparationMinutes } from './model.js';
import { openingState } from './opening-hours.js';
import * as repo from './repo/branches.js';
import type { BranchRow } from './repo/branches.js';

const HHMM = '^([01]\\d|2[0-3]):[0-5]\\d$';
export const OpeningHours = Type.Array(
  Strict({
    day: Type.Integer({ minimum: 0, maximum: 6, description: '0 = Sunday' }),
    open: Type.String({ pattern: HHMM }),
    close: Type.String({ pattern: HHMM }),
  }),
  {
    maxItems: 50,
    description:
      'Opening intervals per weekday in the organization time zone. close after open: same day; close before open: runs past midnight into the next day (20:00-02:00); ' +
      'close equal to open: 24 hours. No intervals: no declared hours (always open). Orders and preflights outside them get 422 BRANCH_CLOSED with next_open_at.',
  },
);
type OpeningHours = Static<typeof OpeningHours>;

export const BranchOut = Type.Object({
  id: Type.String(),
  merchant_id: Type.String(),
  name: Type.String(),
  address: Type.String(),
  location: GeoPoint,
  opening_hours: OpeningHours,
  phone: Nullable(Type.String()),
  active: Type.Boolean(),
  preparation_min: Type.Integer({
    description:
      "minutes the branch usually needs to prepare an order: checkout's promise counts them (the merchant may give another time when accepting)",
  }),
  territory_id: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export type { BranchRow };

export const branchOut = ({ lon, lat, ...b }: BranchRow): Static<typeof BranchOut> => ({ ...b, location: geo(lon, lat)! });

/** A branch as its merchant sees it: with whether it is open now (its hours in the organization's time zone) and when it opens next. */
export const MerchantBranchOut = Type.Object({
  ...BranchOut.properties,
  open_now: Type.Boolean({
    description: 'open at the time of the response by its opening hours (no hours declared: always open); an inactive branch is never open',
  }),
  next_open_at: Nullable(Timestamp),
});

async function merchantBranchesOut(
  ctx: CommerceContext,
  tx: Tx,
  rows: BranchRow[],
  at = new Date(),
): Promise<Static<typeof MerchantBranchOut>[]> {
  const { timezone } = await ctx.deps.organizations.settingsIn(tx);
  return rows.map((b) => {
    const state = openingState(b.opening_hours, timezone, at);
    return { ...branchOut(b), open_now: b.active && state.open, next_open_at: b.active ? state.next_open_at : null };
  });
}

export const loadBranch = repo.findBranch;

const BranchFields = {
  name: ShortText(120),
  address: ShortText(300),
  location: GeoPoint,
  opening_hours: Type.Optional(OpeningHours),
  phone: Type.Optional(Phone),
  active: Type.Optional(Type.Boolean()),
  preparation_min: Type.Optional(PreparationMinutes),
};

/** GET /merchant/branches: the caller's branches, newest first. */
function listOwnBranches(ctx: CommerceContext, actor: Actor, q: { active?: boolean; limit?: number; cursor?: string }) {
  const page = pageRequest(q);
  return ctx.db.withTenant(actor, async (tx) => {
    const m = await ownMerchant(ctx, tx, actor);
    const rows = await repo.listBranches(tx, m.id, { active: q.active, after: page.after, limit: page.limit + 1 });
    const out = await merchantBranchesOut(ctx, tx, rows);
    return toPage(out, page);
  });
}

/** POST /merchant/branches. */
function addBranch(ctx: CommerceContext, actor: Actor, input: Parameters<typeof createBranch>[3]) {
  return ctx.db.withTenant(actor, async (tx) => (await merchantBranchesOut(ctx, tx, [await createBranch(ctx, tx, actor, input)]))[0]);
}

export function branchRoutes(app: Api, ctx: CommerceContext) {
  const merchantOnly = { auth: { roles: ['comercio' as const] } };

  app.get(
    '/merchant/branches',
    {
      config: merchantOnly,
      schema: {
        operationId: 'listMerchantBranches',
        tags: ['merchant'],
        summary: "The calling merchant's branches, newest first",
        querystring: Strict({ ...PageQueryProps, active: Type.Optional(Type.Boolean()) }),
        description:
          '`open_now` and `next_open_at` say at a glance whether each branch takes orders now (its opening hours in the organization time zone).',
        response: { 200: Page(MerchantBranchOut) },
      },
    },
    async (req) => {
      return listOwnBranches(ctx, actorOf(req), req.query);
    },
  );

  app.post(
    '/merchant/branches',
    {
      config: merchantOnly,
      schema: {
        operationId: 'createMerchantBranch',
        tags: ['merchant'],
        summary: 'Create a branch of the calling merchant (active by default)',
        description: 'The territory is the oldest active territory whose polygon covers the location (null when none does).',
        body: Strict(BranchFields),
        response: { 201: MerchantBranchOut },
      },
    },
    async (req, reply) => {
      const actor = actorOf(req);
      return reply.code(201).send(await addBranch(ctx, actor, req.body));
    },
  );

  app.patch(
    '/merchant/branches/:id',
    {
      config: merchantOnly,
      schema: {
        operationId: 'updateMerchantBranch',
        tags: ['merchant'],
        summary: 'Change a branch of the calling merchant; a new location re-derives the territory',
        description:
          '404 for a branch of another merchant or organization. Deactivated branches disappear from the marketplace and take no orders. ' +
          '`preparation_min` (1–240) is the default preparation time the promise of a new order counts; its change is audited (branch.preparation_changed).',
        params: IdParams,
        body: Strict(
          {
            name: Type.Optional(BranchFields.name),
            address: Type.Optional(BranchFields.address),
            location: Type.Optional(GeoPoint),
            opening_hours: Type.Optional(OpeningHours),
            phone: Type.Optional(Nullable(Phone)),
            active: Type.Optional(Type.Boolean()),
            preparation_min: Type.Optional(PreparationMinutes),
          },
          { minProperties: 1 },
        ),
        response: { 200: MerchantBranchOut },
      },
    },
    async (req) => {
      return updateOwnBranch(ctx, actorOf(req), req.params.id, req.body);
    },
  );
}

export async function createBranch(
  ctx: CommerceContext,
  tx: Tx,
  actor: Actor,
  input: {
    name: string;
    address: string;
    location: GeoPoint;
    opening_hours?: OpeningHours;
    phone?: string;
    active?: boolean;
    preparation_min?: number;
  },
): Promise<BranchRow> {
  const m = await ownMerchant(ctx, tx, actor);
  const p = parsePoint(input.location);
  input = await normalizePhones(tx, actor.organizationId, input, ['phone']);
  const id = newId();
  await repo.insertBranch(tx, actor.organizationId, id, m.id, {
    name: input.name,
    address: input.address,
    point: pointSql(p),
    openingHours: input.opening_hours ?? [],
    phone: input.phone ?? null,
    active: input.active ?? true,
    preparationMin: input.preparation_min ?? null,
    territoryId: await ctx.deps.logistics.territoryForPoint(tx, p),
  });
  return (await loadBranch(tx, id))!;
}

/** PATCH /merchant/branches/:id: a new location re-derives the territory; 404 for another merchant's branch. */
export function updateOwnBranch(
  ctx: CommerceContext,
  actor: Actor,
  id: string,
  body: {
    name?: string;
    address?: string;
    location?: GeoPoint;
    opening_hours?: OpeningHours;
    phone?: string | null;
    active?: boolean;
    preparation_min?: number;
  },
): Promise<Static<typeof MerchantBranchOut>> {
  return ctx.db.withTenant(actor, async (tx) => {
    const m = await ownMerchant(ctx, tx, actor);
    const before = await repo.findBranch(tx, id);
    if (!before || before.merchant_id !== m.id) throw AppError.notFound('Branch');
    const p = body.location ? parsePoint(body.location) : null;
    const phone = body.phone ? (await normalizePhones(tx, actor.organizationId, { phone: body.phone }, ['phone'])).phone : null;
    const territoryId = p ? await ctx.deps.logistics.territoryForPoint(tx, p) : before.territory_id;
    await repo.updateBranch(tx, before.id, {
      name: body.name,
      address: body.address,
      point: p ? pointSql(p) : undefined,
      openingHours: body.opening_hours,
      phone: 'phone' in body ? phone : undefined,
      active: body.active,
      preparationMin: body.preparation_min,
      territoryId,
    });
    if (body.preparation_min !== undefined && body.preparation_min !== before.preparation_min) {
      await recordAudit(tx, actor, {
        action: 'branch.preparation_changed',
        entityType: 'merchant_branch',
        entityId: before.id,
        before: { preparation_min: before.preparation_min },
        after: { preparation_min: body.preparation_min },
      });
    }
    return (await merchantBranchesOut(ctx, tx, [(await repo.findBranch(tx, before.id))!]))[0];
  });
}
