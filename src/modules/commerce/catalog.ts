import { Type, type Static } from '@sinclair/typebox';
import { actorOf, type Actor } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import type { CommerceContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import {
  Currency,
  Id,
  IdParams,
  Money,
  NonNegativeMoney,
  Nullable,
  Page,
  PageQueryProps,
  ShortText,
  Strict,
  Timestamp,
} from '../../platform/schemas.js';
import { assertObjectLink } from '../../platform/storage-links.js';
import { assertOwnIds, ownMerchant } from './model.js';
import * as repo from './repo/catalog.js';
import type { CatalogItemRow } from './repo/catalog.js';

export const CatalogItemOut = Type.Object({
  id: Type.String(),
  merchant_id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  price: Money,
  currency: Type.String(),
  available: Type.Boolean(),
  branch_ids: Type.Array(Type.String(), { description: 'branches offering the item; empty = every branch' }),
  image_object_id: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export type { CatalogItemRow };
/** An item row is its output (typed against CatalogItemOut). */
const catalogItemOut = (i: CatalogItemRow): Static<typeof CatalogItemOut> => i;

const BranchIds = Type.Array(Id, { maxItems: 200, uniqueItems: true });

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
function listOwnCatalog(
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
function addCatalogItem(ctx: CommerceContext, actor: Actor, input: Parameters<typeof createCatalogItem>[3]) {
  return ctx.db.withTenant(actor, (tx) => createCatalogItem(ctx, tx, actor, input));
}

export function catalogRoutes(app: Api, ctx: CommerceContext) {
  const merchantOnly = { auth: { roles: ['comercio' as const] } };

  app.get(
    '/merchant/catalog',
    {
      config: merchantOnly,
      schema: {
        operationId: 'listMerchantCatalog',
        tags: ['merchant'],
        summary: "The calling merchant's catalog items, newest first",
        querystring: Strict({ ...PageQueryProps, available: Type.Optional(Type.Boolean()), branch_id: Type.Optional(Id) }),
        response: { 200: Page(CatalogItemOut) },
      },
    },
    async (req) => {
      return listOwnCatalog(ctx, actorOf(req), req.query);
    },
  );

  app.post(
    '/merchant/catalog',
    {
      config: merchantOnly,
      schema: {
        operationId: 'createCatalogItem',
        tags: ['merchant'],
        summary: 'Add an item to the calling merchant catalog',
        description:
          'price >= 0 with at most 2 decimals; currency is the organization currency (settings default_currency): another one is 422 CURRENCY_MISMATCH. branch_ids must be branches of the merchant ' +
          '(422 BRANCH_NOT_FOUND); empty = every branch. image_object_id must be a stored object of the organization (purpose `other`).',
        body: Strict({
          name: ShortText(160),
          description: Type.Optional(ShortText(2000)),
          price: NonNegativeMoney,
          currency: Type.Optional(Currency),
          available: Type.Optional(Type.Boolean()),
          branch_ids: Type.Optional(BranchIds),
          image_object_id: Type.Optional(Id),
        }),
        response: { 201: CatalogItemOut },
      },
    },
    async (req, reply) => {
      const actor = actorOf(req);
      return reply.code(201).send(catalogItemOut(await addCatalogItem(ctx, actor, req.body)));
    },
  );

  app.patch(
    '/merchant/catalog/:id',
    {
      config: merchantOnly,
      schema: {
        operationId: 'updateCatalogItem',
        tags: ['merchant'],
        summary: 'Change a catalog item of the calling merchant (price, availability, branches, image...)',
        description:
          "A new price applies to quotes and orders priced after it; existing orders keep their prices. A currency other than the organization currency is 422 CURRENCY_MISMATCH. 404 for another merchant's item.",
        params: IdParams,
        body: Strict(
          {
            name: Type.Optional(ShortText(160)),
            description: Type.Optional(Nullable(ShortText(2000))),
            price: Type.Optional(NonNegativeMoney),
            currency: Type.Optional(Currency),
            available: Type.Optional(Type.Boolean()),
            branch_ids: Type.Optional(BranchIds),
            image_object_id: Type.Optional(Nullable(Id)),
          },
          { minProperties: 1 },
        ),
        response: { 200: CatalogItemOut },
      },
    },
    async (req) => {
      return catalogItemOut(await updateOwnCatalogItem(ctx, actorOf(req), req.params.id, req.body));
    },
  );
}
