import { actorOf } from '../../../platform/auth.js';
import { Api } from '../../../platform/context.js';
import { Currency, Id, IdParams, NonNegativeMoney, Nullable, Page, PageQueryProps, ShortText, Strict } from '../../../platform/schemas.js';
import { CommerceContext } from '../context.js';
import { BranchIds, CatalogItemOut } from '../schemas.js';
import { addCatalogItem, catalogItemOut, listOwnCatalog, updateOwnCatalogItem } from '../service/catalog.js';
import { Type } from '@sinclair/typebox';

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
