import { Type } from '@sinclair/typebox';
import { actorOf } from '../../../platform/auth.js';
import type { Api } from '../../../platform/context.js';
import { Id, IdParams, Nullable, Page, PageQueryProps, ShortText, Strict } from '../../../platform/schemas.js';
import { EffectiveScopeOut, Percent, PermissionsIn, ProfileCreateProps, ProfileOut, TerritoryIds } from '../schemas.js';
import type { ProfileService } from '../service/profiles.js';

const PROFILE_RULES =
  'Permission keys missing from `permissions` take the SPEC defaults (every key true except `payments_review_decide` and `cash_remittances_record`). ' +
  'commission_min_percent and commission_max_percent both or neither, min ≤ max within 0..100 (else 422 COMMISSION_BOUNDS_INVALID); without bounds the sub-administrator cannot change commissions. ' +
  "Territories must exist in the organization (422 TERRITORY_NOT_FOUND). Under a parent, territories, permissions and bounds must lie within the parent's (422 EXCEEDS_PARENT_SCOPE), " +
  'and the loader also narrows a sub-user to his ancestors at every request. Audited.';

/** Sub-administrators: their administration, and the sub-administrator's own profile and sub-users. */
export function profileRoutes(app: Api, profiles: ProfileService) {
  app.get(
    '/admin/subadmins',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'listSubadmins',
        tags: ['subadmin'],
        summary: 'Sub-administrators of the organization, newest first',
        querystring: Strict({
          ...PageQueryProps,
          active: Type.Optional(Type.Boolean()),
          territory_id: Type.Optional(Id),
          parent_subadmin_user_id: Type.Optional(Id),
        }),
        response: { 200: Page(ProfileOut) },
      },
    },
    async (req) => profiles.list(actorOf(req), req.query),
  );
  app.post(
    '/admin/subadmins',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'createSubadmin',
        tags: ['subadmin'],
        summary:
          'Create a sub-administrator: a new administrator-console user (subadmin) with territories, permission keys and commission bounds',
        description: 'email or phone is required; a duplicate is 409 DUPLICATE_USER; a weak password 400 WEAK_PASSWORD. ' + PROFILE_RULES,
        body: Strict({ ...ProfileCreateProps, parent_subadmin_user_id: Type.Optional(Nullable(Id)) }),
        response: { 201: ProfileOut },
      },
    },
    async (req, reply) => reply.code(201).send(await profiles.create(actorOf(req), req.body)),
  );
  app.patch(
    '/admin/subadmins/:id',
    {
      config: { auth: { roles: ['administrator', 'subadmin'], permission: 'subusers_manage' } },
      schema: {
        operationId: 'updateSubadmin',
        tags: ['subadmin'],
        summary:
          'Change a sub-administrator: display name, active, territories (replaced), permission keys (merged), commission bounds, parent',
        description:
          'Administrators change any profile; a sub-administrator with `subusers_manage` only his sub-users (others are 404), never their parent (403 FIELD_NOT_ALLOWED), ' +
          'and never beyond his own scope. A parent that would create a cycle is 422 PARENT_CYCLE. updated_at is refreshed. ' +
          PROFILE_RULES,
        params: IdParams,
        body: Strict(
          {
            display_name: Type.Optional(ShortText(120)),
            active: Type.Optional(Type.Boolean()),
            territory_ids: Type.Optional(TerritoryIds),
            permissions: Type.Optional(PermissionsIn),
            commission_min_percent: Type.Optional(Nullable(Percent)),
            commission_max_percent: Type.Optional(Nullable(Percent)),
            parent_subadmin_user_id: Type.Optional(Nullable(Id)),
          },
          { minProperties: 1 },
        ),
        response: { 200: ProfileOut },
      },
    },
    async (req) => profiles.update(actorOf(req), req.params.id, req.body),
  );
  app.get(
    '/subadmin/me',
    {
      config: { auth: { roles: ['subadmin'] } },
      schema: {
        operationId: 'getSubadminMe',
        tags: ['subadmin'],
        summary: "The caller's profile and his effective scope (his own narrowed by his ancestors')",
        response: {
          200: Type.Object({
            profile: ProfileOut,
            effective: EffectiveScopeOut,
          }),
        },
      },
    },
    async (req) => profiles.me(actorOf(req)),
  );
  app.get(
    '/subadmin/profiles',
    {
      config: { auth: { roles: ['subadmin'], permission: 'subusers_manage' } },
      schema: {
        operationId: 'listSubadminProfiles',
        tags: ['subadmin'],
        summary: "The caller's sub-users (every level below him), newest first",
        querystring: Strict({ ...PageQueryProps, active: Type.Optional(Type.Boolean()), territory_id: Type.Optional(Id) }),
        response: { 200: Page(ProfileOut) },
      },
    },
    async (req) => profiles.list(actorOf(req), req.query),
  );
  app.post(
    '/subadmin/profiles',
    {
      config: { auth: { roles: ['subadmin'], permission: 'subusers_manage' } },
      schema: {
        operationId: 'createSubadminProfile',
        tags: ['subadmin'],
        summary: 'Create a sub-user under the caller (parent = the caller), confined to a subset of his territories and permissions',
        description:
          "A territory, permission or commission bound beyond the caller's is 422 EXCEEDS_PARENT_SCOPE. Missing permission keys default to the SPEC default " +
          "and never to more than the caller holds; bounds default to the caller's. " +
          PROFILE_RULES,
        body: Strict(ProfileCreateProps),
        response: { 201: ProfileOut },
      },
    },
    async (req, reply) => reply.code(201).send(await profiles.create(actorOf(req), req.body)),
  );
}
