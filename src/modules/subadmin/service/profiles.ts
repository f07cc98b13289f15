import type { Static } from '@sinclair/typebox';
import { SUBADMIN_PERMISSION_KEYS, type Actor } from '../../../platform/auth.js';
import { recordAudit } from '../../../platform/audit.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import type { SubadminContext } from '../context.js';
import * as repo from '../repo.js';
import type { ProfileRow } from '../repo.js';
import type { Permissions, ProfileOut } from '../schemas.js';
import { cents, checkBounds, DEFAULT_PERMISSIONS, fillPermissions } from './permissions.js';
import { effectiveScope, type ScopeLoader } from './scope.js';

/** A profile as the API shows it (typed against ProfileOut). */
export function profileOut(p: ProfileRow): Static<typeof ProfileOut> {
  return {
    user_id: p.user_id,
    email: p.email,
    phone: p.phone,
    display_name: p.display_name,
    active: p.active,
    permissions: fillPermissions(p.permissions),
    territory_ids: p.territory_ids,
    parent_subadmin_user_id: p.parent_subadmin_user_id,
    created_by_user_id: p.created_by_user_id,
    commission_min_percent: p.commission_min_percent,
    commission_max_percent: p.commission_max_percent,
    created_at: p.created_at,
    updated_at: p.updated_at,
  };
}
export interface NewProfile {
  email?: string;
  phone?: string;
  password: string;
  display_name: string;
  territory_ids: string[];
  permissions?: Partial<Permissions>;
  commission_min_percent?: string | null;
  commission_max_percent?: string | null;
  parent_subadmin_user_id?: string | null;
  active?: boolean;
}

export interface ProfilePatch {
  display_name?: string;
  active?: boolean;
  territory_ids?: string[];
  permissions?: Partial<Permissions>;
  commission_min_percent?: string | null;
  commission_max_percent?: string | null;
  parent_subadmin_user_id?: string | null;
}

/** What a profile may hold at most: its parent's effective scope (or the whole organization without a parent). */
interface Ceiling {
  territoryIds: string[] | null;
  permissions: Permissions | null;
  min: string | null;
  max: string | null;
  /** Without a parent the bounds are free; under a parent they must lie within the parent's (none if the parent has none). */
  bounded: boolean;
}

const FREE: Ceiling = { territoryIds: null, permissions: null, min: null, max: null, bounded: false };

export function createProfileService(ctx: SubadminContext, loader: ScopeLoader) {
  const { db } = ctx;

  async function load(tx: Tx, userId: string): Promise<ProfileRow | null> {
    return repo.findProfile(tx, userId);
  }

  async function ceilingOf(tx: Tx, organizationId: string, parentId: string | null): Promise<Ceiling> {
    if (!parentId) return FREE;
    const s = await effectiveScope(tx, organizationId, parentId);
    if (!s)
      throw AppError.unprocessable('The parent sub-administrator does not exist', 'PARENT_NOT_FOUND', [
        { field: 'parent_subadmin_user_id', message: 'unknown' },
      ]);
    return {
      territoryIds: s.territoryIds,
      permissions: s.permissions,
      min: s.commissionMinPercent,
      max: s.commissionMaxPercent,
      bounded: true,
    };
  }

  /** Territories must exist in the organization (422 TERRITORY_NOT_FOUND) and lie within the ceiling (422 EXCEEDS_PARENT_SCOPE). */
  async function checkTerritories(tx: Tx, ids: string[], ceiling: Ceiling) {
    const unknown: string[] = [];
    for (const id of ids) if (!(await ctx.deps.logistics.getTerritory(tx, id))) unknown.push(id);
    if (unknown.length)
      throw AppError.unprocessable(
        'Unknown territory',
        'TERRITORY_NOT_FOUND',
        unknown.map((id) => ({ field: 'territory_ids', message: `unknown territory ${id}` })),
      );
    const outside = ceiling.territoryIds ? ids.filter((id) => !ceiling.territoryIds!.includes(id)) : [];
    if (outside.length) {
      throw AppError.unprocessable(
        'A sub-user may only receive territories of his parent',
        'EXCEEDS_PARENT_SCOPE',
        outside.map((id) => ({ field: 'territory_ids', message: `not a territory of the parent: ${id}` })),
      );
    }
  }

  function checkPermissions(p: Permissions, ceiling: Ceiling) {
    if (!ceiling.permissions) return;
    const over = SUBADMIN_PERMISSION_KEYS.filter((k) => p[k] && !ceiling.permissions![k]);
    if (over.length)
      throw AppError.unprocessable(
        'A sub-user may not hold a permission his parent lacks',
        'EXCEEDS_PARENT_SCOPE',
        over.map((k) => ({ field: `permissions.${k}`, message: 'the parent lacks it' })),
      );
  }

  function checkCeilingBounds(min: string | null, max: string | null, ceiling: Ceiling) {
    checkBounds(min, max);
    if (!ceiling.bounded) return;
    const bad = (v: string | null) =>
      v !== null && (ceiling.min === null || ceiling.max === null || cents(v) < cents(ceiling.min) || cents(v) > cents(ceiling.max));
    if (bad(min) || bad(max)) {
      throw AppError.unprocessable(
        `Commission bounds must lie within the parent's ${ceiling.min ?? '-'}..${ceiling.max ?? '-'}`,
        'EXCEEDS_PARENT_SCOPE',
        [{ field: bad(min) ? 'commission_min_percent' : 'commission_max_percent', message: 'outside the parent bounds' }],
      );
    }
  }

  /** Defaults for a missing key: the SPEC default, never more than the parent holds. */
  const defaultsUnder = (ceiling: Ceiling): Permissions =>
    ceiling.permissions
      ? (Object.fromEntries(SUBADMIN_PERMISSION_KEYS.map((k) => [k, DEFAULT_PERMISSIONS[k] && ceiling.permissions![k]])) as Permissions)
      : DEFAULT_PERMISSIONS;

  async function setTerritories(tx: Tx, actor: Actor, userId: string, ids: string[]) {
    await repo.setUserTerritories(tx, actor.organizationId, userId, ids, actor.userId);
  }

  /** The administrator (any parent) or a sub-administrator with subusers_manage (parent = himself). */
  async function create(actor: Actor, input: NewProfile) {
    const out = await db.withTenant(actor, async (tx) => {
      const parentId = actor.kind === 'subadmin' ? actor.userId : (input.parent_subadmin_user_id ?? null);
      const ceiling = await ceilingOf(tx, actor.organizationId, parentId);
      const territoryIds = [...new Set(input.territory_ids)];
      await checkTerritories(tx, territoryIds, ceiling);
      const permissions = fillPermissions(input.permissions, defaultsUnder(ceiling));
      checkPermissions(permissions, ceiling);
      // Under a parent, bounds default to the parent's; otherwise to none.
      const min = input.commission_min_percent !== undefined ? input.commission_min_percent : ceiling.bounded ? ceiling.min : null;
      const max = input.commission_max_percent !== undefined ? input.commission_max_percent : ceiling.bounded ? ceiling.max : null;
      checkCeilingBounds(min, max, ceiling);
      const user = await ctx.deps.identity.insertUser(tx, actor.organizationId, {
        email: input.email ?? null,
        phone: input.phone ?? null,
        password: input.password,
        display_name: input.display_name,
        role: 'administrator',
        subadmin: true,
      });
      await repo.insertProfile(tx, actor.organizationId, user.id, actor.userId, {
        displayName: input.display_name,
        active: input.active ?? true,
        permissions,
        parentId,
        min,
        max,
      });
      await setTerritories(tx, actor, user.id, territoryIds);
      const row = (await load(tx, user.id))!;
      await recordAudit(tx, actor, {
        action: 'subadmin.created',
        entityType: 'subadmin_profile',
        entityId: user.id,
        after: profileOut(row),
      });
      await loader.changed(tx);
      return profileOut(row);
    });
    loader.clear();
    return out;
  }

  const isDescendant = repo.isDescendant;

  /**
   * PATCH: administrators change any profile; a sub-administrator with subusers_manage only profiles
   * below him (others are 404), within his own scope, and never their parent.
   */
  async function update(actor: Actor, userId: string, patch: ProfilePatch) {
    const out = await db.withTenant(actor, async (tx) => {
      const before = await load(tx, userId);
      if (!before) throw AppError.notFound('Sub-administrator');
      if (actor.kind === 'subadmin') {
        if (!(await isDescendant(tx, userId, actor.userId))) throw AppError.notFound('Sub-administrator');
        if (patch.parent_subadmin_user_id !== undefined)
          throw AppError.forbidden('Only an administrator may move a sub-administrator to another parent', 'FIELD_NOT_ALLOWED');
      }
      await repo.lockProfile(tx, userId);
      const parentId = patch.parent_subadmin_user_id !== undefined ? patch.parent_subadmin_user_id : before.parent_subadmin_user_id;
      if (parentId && (parentId === userId || (await isDescendant(tx, parentId, userId)))) {
        throw AppError.unprocessable('A sub-administrator cannot be placed under himself or one of his sub-users', 'PARENT_CYCLE', [
          { field: 'parent_subadmin_user_id', message: 'would create a cycle' },
        ]);
      }
      const ceiling = await ceilingOf(tx, actor.organizationId, parentId);
      // A sub-administrator never grants more than he holds himself (his own scope is below the parent's anyway).
      if (actor.kind === 'subadmin') {
        const mine = actor.subadmin!;
        ceiling.territoryIds = mine.territoryIds.filter((t) => !ceiling.territoryIds || ceiling.territoryIds.includes(t));
        ceiling.permissions = Object.fromEntries(
          SUBADMIN_PERMISSION_KEYS.map((k) => [k, mine.permissions[k] && (ceiling.permissions?.[k] ?? true)]),
        ) as Permissions;
      }
      const territoryIds = patch.territory_ids ? [...new Set(patch.territory_ids)] : before.territory_ids;
      if (patch.territory_ids || patch.parent_subadmin_user_id !== undefined) await checkTerritories(tx, territoryIds, ceiling);
      const permissions = fillPermissions({ ...fillPermissions(before.permissions), ...(patch.permissions ?? {}) });
      if (patch.permissions || patch.parent_subadmin_user_id !== undefined) {
        // Only newly granted keys must fit the ceiling; keys already held stay (the loader narrows them anyway).
        const granted = Object.fromEntries(
          SUBADMIN_PERMISSION_KEYS.map((k) => [
            k,
            permissions[k] && (patch.parent_subadmin_user_id !== undefined || patch.permissions?.[k] === true),
          ]),
        ) as Permissions;
        checkPermissions(granted, ceiling);
      }
      const min = patch.commission_min_percent !== undefined ? patch.commission_min_percent : before.commission_min_percent;
      const max = patch.commission_max_percent !== undefined ? patch.commission_max_percent : before.commission_max_percent;
      if (
        patch.commission_min_percent !== undefined ||
        patch.commission_max_percent !== undefined ||
        patch.parent_subadmin_user_id !== undefined
      )
        checkCeilingBounds(min, max, ceiling);
      await repo.updateProfile(tx, userId, {
        displayName: patch.display_name ?? before.display_name,
        active: patch.active ?? before.active,
        permissions,
        parentId,
        min,
        max,
      });
      if (patch.territory_ids) await setTerritories(tx, actor, userId, territoryIds);
      const after = (await load(tx, userId))!;
      await recordAudit(tx, actor, {
        action: 'subadmin.updated',
        entityType: 'subadmin_profile',
        entityId: userId,
        before: profileOut(before),
        after: profileOut(after),
      });
      await loader.changed(tx);
      return profileOut(after);
    });
    loader.clear();
    return out;
  }

  async function list(
    actor: Actor,
    q: { active?: boolean; territory_id?: string; parent_subadmin_user_id?: string; limit?: number; cursor?: string },
  ) {
    const page = pageRequest(q);
    return db.withTenant(actor, async (tx) => {
      // A sub-administrator lists the profiles below him (any depth).
      const below = actor.kind === 'subadmin' ? actor.userId : null;
      const rows = await repo.listProfiles(tx, {
        below,
        active: q.active,
        territoryId: q.territory_id,
        parentId: q.parent_subadmin_user_id,
        after: page.after,
        limit: page.limit + 1,
      });
      return toPage(rows, page, profileOut);
    });
  }

  async function me(actor: Actor) {
    return db.withTenant(actor, async (tx) => {
      const row = await load(tx, actor.userId);
      if (!row) throw AppError.notFound('Sub-administrator profile');
      const s = actor.subadmin!;
      const territories = [];
      for (const id of s.territoryIds) {
        const t = await ctx.deps.logistics.getTerritory(tx, id);
        if (t) territories.push({ id: t.id, name: t.name, active: t.active });
      }
      return {
        profile: profileOut(row),
        effective: {
          active: s.active,
          territory_ids: s.territoryIds,
          territories,
          permissions: s.permissions,
          commission_min_percent: s.commissionMinPercent,
          commission_max_percent: s.commissionMaxPercent,
        },
      };
    });
  }

  /** Active sub-administrators whose effective territories include `territoryId` (for territory notifications). */
  async function userIdsOfTerritory(tx: Tx, organizationId: string, territoryId: string): Promise<string[]> {
    const out: string[] = [];
    for (const userId of await repo.activeHoldersOfTerritory(tx, territoryId))
      if ((await effectiveScope(tx, organizationId, userId))?.territoryIds.includes(territoryId)) out.push(userId);
    return out;
  }

  return { load, create, update, list, me, userIdsOfTerritory };
}

export type ProfileService = ReturnType<typeof createProfileService>;
