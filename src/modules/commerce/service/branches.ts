import * as repo from '../repo/branches.js';
import { recordAudit } from '../../../platform/audit.js';
import { Actor } from '../../../platform/auth.js';
import { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { GeoPoint, parsePoint, pointSql } from '../../../platform/geo.js';
import { newId } from '../../../platform/ids.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { normalizePhones } from '../../../platform/phone.js';
import { CommerceContext } from '../context.js';
import { BranchRow } from '../repo/branches.js';
import { BranchOut, MerchantBranchOut, type OpeningHours } from '../schemas.js';
import { geo, ownMerchant } from './common.js';
import { openingState } from './opening-hours.js';
import { Static } from '@sinclair/typebox';

export const branchOut = ({ lon, lat, ...b }: BranchRow): Static<typeof BranchOut> => ({ ...b, location: geo(lon, lat)! });

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

/** GET /merchant/branches: the caller's branches, newest first. */
export function listOwnBranches(ctx: CommerceContext, actor: Actor, q: { active?: boolean; limit?: number; cursor?: string }) {
  const page = pageRequest(q);
  return ctx.db.withTenant(actor, async (tx) => {
    const m = await ownMerchant(ctx, tx, actor);
    const rows = await repo.listBranches(tx, m.id, { active: q.active, after: page.after, limit: page.limit + 1 });
    const out = await merchantBranchesOut(ctx, tx, rows);
    return toPage(out, page);
  });
}

/** POST /merchant/branches. */
export function addBranch(ctx: CommerceContext, actor: Actor, input: Parameters<typeof createBranch>[3]) {
  return ctx.db.withTenant(actor, async (tx) => (await merchantBranchesOut(ctx, tx, [await createBranch(ctx, tx, actor, input)]))[0]);
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
