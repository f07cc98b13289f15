import { Type } from '@sinclair/typebox';
import { actorOf, type Actor } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import type { CommerceContext } from './index.js';
import type { Tx } from '../../platform/db/index.js';
import { AppError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { Currency, Id, IdParams, Money, NonNegativeMoney, Nullable, Page, PageQueryProps, ShortText, Strict, Timestamp } from '../../platform/schemas.js';
import { assertObjectLink } from '../../platform/storage-links.js';
import { assertOwnIds, inTx, ownMerchant } from './model.js';

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

export interface CatalogItemRow {
  id: string;
  merchant_id: string;
  name: string;
  description: string | null;
  price: string;
  currency: string;
  available: boolean;
  branch_ids: string[];
  image_object_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export const CATALOG_SELECT = 'SELECT id, merchant_id, name, description, price, currency, available, branch_ids, image_object_id, created_at, updated_at FROM catalog_item';

const BranchIds = Type.Array(Id, { maxItems: 200, uniqueItems: true });

/** The organization's one currency; a different one sent by the client is refused (422 CURRENCY_MISMATCH), never stored. */
export async function orgCurrency(ctx: CommerceContext, tx: Tx, sent?: string | null): Promise<string> {
  const currency = (await ctx.deps.organizations.settingsIn(tx)).default_currency;
  if (sent && sent !== currency) {
    throw AppError.unprocessable(`This organization works in ${currency} only`, 'CURRENCY_MISMATCH', [{ field: 'currency', message: `must be ${currency}` }]);
  }
  return currency;
}

export async function createCatalogItem(
  ctx: CommerceContext,
  tx: Tx,
  actor: Actor,
  input: { name: string; description?: string; price: string; currency?: string; available?: boolean; branch_ids?: string[]; image_object_id?: string },
): Promise<CatalogItemRow> {
  const m = await ownMerchant(ctx, tx, actor);
  await assertOwnIds(tx, 'merchant_branch', m.id, input.branch_ids ?? [], 'branch_ids');
  if (input.image_object_id) await assertObjectLink(ctx, tx, actor, input.image_object_id, ['other']);
  const currency = await orgCurrency(ctx, tx, input.currency);
  const { rows } = await tx.query<CatalogItemRow>(
    `INSERT INTO catalog_item (organization_id, id, merchant_id, name, description, price, currency, available, branch_ids, image_object_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::text[], $10)
     RETURNING id, merchant_id, name, description, price, currency, available, branch_ids, image_object_id, created_at, updated_at`,
    [actor.organizationId, newId(), m.id, input.name, input.description ?? null, input.price, currency, input.available ?? true, input.branch_ids ?? [], input.image_object_id ?? null],
  );
  return rows[0];
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
      const actor = actorOf(req);
      const page = pageRequest(req.query);
      return inTx(ctx, actor, async (tx) => {
        const m = await ownMerchant(ctx, tx, actor);
        const { rows } = await tx.query<CatalogItemRow>(
          `${CATALOG_SELECT} WHERE merchant_id = $1 AND ($2::boolean IS NULL OR available = $2)
              AND ($3::text IS NULL OR branch_ids = '{}' OR $3 = ANY(branch_ids)) AND ($4::text IS NULL OR id < $4)
            ORDER BY id DESC LIMIT $5`,
          [m.id, req.query.available ?? null, req.query.branch_id ?? null, page.after, page.limit + 1],
        );
        return toPage(rows, page);
      });
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
      return reply.code(201).send(await inTx(ctx, actor, (tx) => createCatalogItem(ctx, tx, actor, req.body)));
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
        description: 'A new price applies to quotes and orders priced after it; existing orders keep their prices. A currency other than the organization currency is 422 CURRENCY_MISMATCH. 404 for another merchant\'s item.',
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
      const actor = actorOf(req);
      const b = req.body;
      return inTx(ctx, actor, async (tx) => {
        const m = await ownMerchant(ctx, tx, actor);
        const found = (await tx.query<CatalogItemRow>(`${CATALOG_SELECT} WHERE id = $1 AND merchant_id = $2`, [req.params.id, m.id])).rows[0];
        if (!found) throw AppError.notFound('Catalog item');
        if (b.branch_ids) await assertOwnIds(tx, 'merchant_branch', m.id, b.branch_ids, 'branch_ids');
        if (b.image_object_id) await assertObjectLink(ctx, tx, actor, b.image_object_id, ['other']);
        if (b.currency) await orgCurrency(ctx, tx, b.currency);
        const { rows } = await tx.query<CatalogItemRow>(
          `UPDATE catalog_item SET name = COALESCE($2, name), description = CASE WHEN $3 THEN $4 ELSE description END, price = COALESCE($5::numeric, price),
                  currency = COALESCE($6, currency), available = COALESCE($7, available), branch_ids = COALESCE($8::text[], branch_ids),
                  image_object_id = CASE WHEN $9 THEN $10 ELSE image_object_id END, updated_at = now()
            WHERE id = $1
            RETURNING id, merchant_id, name, description, price, currency, available, branch_ids, image_object_id, created_at, updated_at`,
          [found.id, b.name ?? null, 'description' in b, b.description ?? null, b.price ?? null, b.currency ?? null, b.available ?? null, b.branch_ids ?? null, 'image_object_id' in b, b.image_object_id ?? null],
        );
        return rows[0];
      });
    },
  );
}
