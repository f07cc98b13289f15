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
import { geo, inTx, ownMerchant } from './model.js';

const HHMM = '^([01]\\d|2[0-3]):[0-5]\\d$';
export const OpeningHours = Type.Array(
  Strict({ day: Type.Integer({ minimum: 0, maximum: 6, description: '0 = Sunday' }), open: Type.String({ pattern: HHMM }), close: Type.String({ pattern: HHMM }) }),
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
  territory_id: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export interface BranchRow {
  id: string;
  merchant_id: string;
  name: string;
  address: string;
  lon: number;
  lat: number;
  opening_hours: OpeningHours;
  phone: string | null;
  active: boolean;
  territory_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export const BRANCH_SELECT = `SELECT b.id, b.merchant_id, b.name, b.address, (b.location)[0] AS lon, (b.location)[1] AS lat, b.opening_hours, b.phone, b.active,
                                     b.territory_id, b.created_at, b.updated_at FROM merchant_branch b`;

export const branchOut = ({ lon, lat, ...b }: BranchRow) => ({ ...b, location: geo(lon, lat)! });

export async function loadBranch(tx: Tx, id: string): Promise<BranchRow | null> {
  return (await tx.query<BranchRow>(`${BRANCH_SELECT} WHERE b.id = $1`, [id])).rows[0] ?? null;
}

const BranchFields = {
  name: ShortText(120),
  address: ShortText(300),
  location: GeoPoint,
  opening_hours: Type.Optional(OpeningHours),
  phone: Type.Optional(Phone),
  active: Type.Optional(Type.Boolean()),
};

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
        response: { 200: Page(BranchOut) },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      const page = pageRequest(req.query);
      return inTx(ctx, actor, async (tx) => {
        const m = await ownMerchant(ctx, tx, actor);
        const { rows } = await tx.query<BranchRow>(
          `${BRANCH_SELECT} WHERE b.merchant_id = $1 AND ($2::boolean IS NULL OR b.active = $2) AND ($3::text IS NULL OR b.id < $3) ORDER BY b.id DESC LIMIT $4`,
          [m.id, req.query.active ?? null, page.after, page.limit + 1],
        );
        return toPage(rows, page, branchOut);
      });
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
        response: { 201: BranchOut },
      },
    },
    async (req, reply) => {
      const actor = actorOf(req);
      const b = await inTx(ctx, actor, (tx) => createBranch(ctx, tx, actor, req.body));
      return reply.code(201).send(branchOut(b));
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
        description: "404 for a branch of another merchant or organization. Deactivated branches disappear from the marketplace and take no orders.",
        params: IdParams,
        body: Strict(
          {
            name: Type.Optional(BranchFields.name),
            address: Type.Optional(BranchFields.address),
            location: Type.Optional(GeoPoint),
            opening_hours: Type.Optional(OpeningHours),
            phone: Type.Optional(Nullable(Phone)),
            active: Type.Optional(Type.Boolean()),
          },
          { minProperties: 1 },
        ),
        response: { 200: BranchOut },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      const body = req.body;
      return inTx(ctx, actor, async (tx) => {
        const m = await ownMerchant(ctx, tx, actor);
        const before = await loadBranch(tx, req.params.id);
        if (!before || before.merchant_id !== m.id) throw AppError.notFound('Branch');
        const p = body.location ? parsePoint(body.location) : null;
        const phone = body.phone ? (await normalizePhones(tx, actor.organizationId, { phone: body.phone }, ['phone'])).phone : null;
        const territoryId = p ? await ctx.deps.logistics.territoryForPoint(tx, p) : before.territory_id;
        await tx.query(
          `UPDATE merchant_branch SET name = COALESCE($2, name), address = COALESCE($3, address), location = COALESCE($4::point, location),
                  opening_hours = COALESCE($5::jsonb, opening_hours), phone = CASE WHEN $6 THEN $7 ELSE phone END, active = COALESCE($8, active),
                  territory_id = $9, updated_at = now()
            WHERE id = $1`,
          [
            before.id,
            body.name ?? null,
            body.address ?? null,
            p ? pointSql(p) : null,
            body.opening_hours ? JSON.stringify(body.opening_hours) : null,
            'phone' in body,
            phone,
            body.active ?? null,
            territoryId,
          ],
        );
        return branchOut((await loadBranch(tx, before.id))!);
      });
    },
  );
}

export async function createBranch(
  ctx: CommerceContext,
  tx: Tx,
  actor: Actor,
  input: { name: string; address: string; location: GeoPoint; opening_hours?: OpeningHours; phone?: string; active?: boolean },
): Promise<BranchRow> {
  const m = await ownMerchant(ctx, tx, actor);
  const p = parsePoint(input.location);
  input = await normalizePhones(tx, actor.organizationId, input, ['phone']);
  const id = newId();
  await tx.query(
    `INSERT INTO merchant_branch (organization_id, id, merchant_id, name, address, location, opening_hours, phone, active, territory_id)
     VALUES ($1, $2, $3, $4, $5, $6::point, $7::jsonb, $8, $9, $10)`,
    [
      actor.organizationId,
      id,
      m.id,
      input.name,
      input.address,
      pointSql(p),
      JSON.stringify(input.opening_hours ?? []),
      input.phone ?? null,
      input.active ?? true,
      await ctx.deps.logistics.territoryForPoint(tx, p),
    ],
  );
  return (await loadBranch(tx, id))!;
}
