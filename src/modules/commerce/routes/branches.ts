import { actorOf } from '../../../platform/auth.js';
import { Api } from '../../../platform/context.js';
import { GeoPoint } from '../../../platform/geo.js';
import { IdParams, Nullable, Page, PageQueryProps, Phone, Strict } from '../../../platform/schemas.js';
import { CommerceContext } from '../context.js';
import { BranchFields, MerchantBranchOut, PreparationMinutes, OpeningHours } from '../schemas.js';
import { addBranch, listOwnBranches, updateOwnBranch } from '../service/branches.js';
import { Type } from '@sinclair/typebox';

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
