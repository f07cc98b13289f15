import * as repo from '../repo/catalog.js';
import { Actor } from '../../../platform/auth.js';
import { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { assertObjectLink } from '../../storage/index.js';
import { CommerceContext } from '../context.js';
import { CatalogItemRow } from '../repo/catalog.js';
import { CatalogItemOut } from '../schemas.js';
import { assertOwnIds, ownMerchant } from './common.js';
import { Static } from '@sinclair/typebox';

/** An item row is its output (typed against CatalogItemOut). */
export const catalogItemOut = (i: CatalogItemRow): Static<typeof CatalogItemOut> => i;

/** The organization's one currency; a different one sent by the client is refused (422 CURRENCY_MISMATCH), never stored. */
export async function orgCurrency(ctx: CommerceContext, tx: Tx, sent?: string | null): Promise<string> {
  const currency = (await ctx.deps.organizations.settingsIn(tx)).default_currency;
  if (sent && sent !== currency) {
    throw AppError.unprocessable(`This organization works in ${currency} only`, 'CURRENCY_MISMATCH', [
      { field: 'currency', message: `must be ${currency}` },
    ]);
  }
  return currency;
}

export async function createCatalogItem(
  ctx: CommerceContext,
  tx: Tx,
  actor: Actor,
  input: {
    name: string;
    description?: string;
    price: string;
    currency?: string;
    available?: boolean;
    branch_ids?: string[];
    image_object_id?: string;
  },
): Promise<CatalogItemRow> {
  const m = await ownMerchant(ctx, tx, actor);
  await assertOwnIds(tx, 'merchant_branch', m.id, input.branch_ids ?? [], 'branch_ids');
  if (input.image_object_id) await assertObjectLink(ctx, tx, actor, input.image_object_id, ['other']);
  const currency = await orgCurrency(ctx, tx, input.currency);
  return repo.insertCatalogItem(tx, actor.organizationId, {
    id: newId(),
    merchant_id: m.id,
    name: input.name,
    description: input.description ?? null,
    price: input.price,
    currency,
    available: input.available ?? true,
    branch_ids: input.branch_ids ?? [],
    image_object_id: input.image_object_id ?? null,
  });
}

/** PATCH /merchant/catalog/:id: a new price applies to carts priced afterwards; 404 for another merchant's item. */
export function updateOwnCatalogItem(
  ctx: CommerceContext,
  actor: Actor,
  id: string,
  b: {
    name?: string;
    description?: string | null;
    price?: string;
    currency?: string;
    available?: boolean;
    branch_ids?: string[];
    image_object_id?: string | null;
  },
): Promise<CatalogItemRow> {
  return ctx.db.withTenant(actor, async (tx) => {
    const m = await ownMerchant(ctx, tx, actor);
    const found = await repo.findMerchantItem(tx, m.id, id);
    if (!found) throw AppError.notFound('Catalog item');
    if (b.branch_ids) await assertOwnIds(tx, 'merchant_branch', m.id, b.branch_ids, 'branch_ids');
    if (b.image_object_id) await assertObjectLink(ctx, tx, actor, b.image_object_id, ['other']);
    if (b.currency) await orgCurrency(ctx, tx, b.currency);
    return repo.updateCatalogItem(tx, found.id, {
      name: b.name,
      description: 'description' in b ? (b.description ?? null) : undefined,
      price: b.price,
      currency: b.currency,
      available: b.available,
      branch_ids: b.branch_ids,
      image_object_id: 'image_object_id' in b ? (b.image_object_id ?? null) : undefined,
    });
  });
}

/** GET /merchant/catalog: the caller's items, newest first. */
export function listOwnCatalog(
  ctx: CommerceContext,
  actor: Actor,
  q: { available?: boolean; branch_id?: string; limit?: number; cursor?: string },
) {
  const page = pageRequest(q);
  return ctx.db.withTenant(actor, async (tx) => {
    const m = await ownMerchant(ctx, tx, actor);
    return toPage(
      await repo.listCatalog(tx, m.id, { available: q.available, branchId: q.branch_id, after: page.after, limit: page.limit + 1 }),
      page,
      catalogItemOut,
    );
  });
}

/** POST /merchant/catalog. */
export function addCatalogItem(ctx: CommerceContext, actor: Actor, input: Parameters<typeof createCatalogItem>[3]) {
  return ctx.db.withTenant(actor, (tx) => createCatalogItem(ctx, tx, actor, input));
}
