import { normalizePhones } from '../../../platform/phone.js';
import { type Actor } from '../../../platform/auth.js';
import { recordAudit } from '../../../platform/audit.js';
import type { LogisticsContext } from '../context.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import { GeoPoint, parsePoint, pointSql } from '../../../platform/geo.js';
import { newId } from '../../../platform/ids.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { assertTransition } from '../../../platform/state-machine.js';
import { APPROVAL_ACTIONS, APPROVAL_TRANSITIONS, type ApprovalAction } from './transitions.js';
import { merchantOut } from './mappers.js';
import { scopeOf } from '../../../platform/scope.js';
import { type ApprovalStatus } from '../schemas.js';
import { type MerchantRow } from '../repo/merchants.js';
import * as repo from '../repo/merchants.js';
import { assertTerritories, territoryForPoint } from './territories.js';
import { createCache } from '../../../platform/cache.js';
import { merchantChanged, merchantOfUser as cachedMerchantOfUser } from './merchant-cache.js';

const PERCENT = /^\d{1,3}(\.\d{1,2})?$/;

export interface NewMerchant {
  owner_user_id?: string;
  name: string;
  phone?: string;
  address?: string;
  location?: GeoPoint;
  territory_id?: string;
  commission_percent?: string;
}

export function createMerchantService(ctx: LogisticsContext) {
  const getMerchant = (tx: Tx, id: string): Promise<MerchantRow | null> => repo.findMerchant(tx, id);
  const merchantOfUser = (tx: Tx, userId: string): Promise<MerchantRow | null> => cachedMerchantOfUser(ctx, tx, userId);
  // A merchant's owner is set when the merchant is created and never changes: kept until the cache is full.
  const owners = createCache<string, string | null>({ ttlMs: (owner) => (owner ? Infinity : 0) });
  /** The user who owns a merchant of the caller's organization (null: none visible), read once per instance. */
  const merchantOwner = (tx: Tx, organizationId: string, merchantId: string): Promise<string | null> =>
    owners.getOwn(`${organizationId}:${merchantId}`, async () => (await getMerchant(tx, merchantId))?.owner_user_id ?? null);

  async function getScoped(tx: Tx, actor: Actor, id: string): Promise<MerchantRow> {
    const m = await getMerchant(tx, id);
    const scope = scopeOf(actor);
    if (!m || (scope && (!m.territory_id || !scope.includes(m.territory_id)))) throw AppError.notFound('Merchant');
    return m;
  }

  /** Staff create merchants for a `comercio` user; a `comercio` user may register his own (pending). */
  async function create(tx: Tx, actor: Actor, input: NewMerchant): Promise<MerchantRow> {
    const selfService = actor.kind === 'comercio';
    const ownerId = selfService ? actor.userId : input.owner_user_id;
    if (!ownerId) throw AppError.badRequest('owner_user_id is required', [{ field: 'owner_user_id', message: 'required' }]);
    if (selfService && input.owner_user_id && input.owner_user_id !== actor.userId)
      throw AppError.forbidden('A merchant may only register himself');
    if (selfService && input.commission_percent !== undefined)
      throw AppError.forbidden('The commission is set by the administration', 'FIELD_NOT_ALLOWED');
    if (!(await ctx.deps.identity.userExists(tx, ownerId, 'comercio'))) {
      throw AppError.unprocessable('owner_user_id must be a user with the comercio role', 'USER_NOT_MERCHANT', [
        { field: 'owner_user_id', message: 'not a comercio user' },
      ]);
    }
    if (input.commission_percent !== undefined && (!PERCENT.test(input.commission_percent) || Number(input.commission_percent) > 100)) {
      throw AppError.badRequest('commission_percent must be between 0 and 100', [{ field: 'commission_percent', message: 'out of range' }]);
    }
    input = await normalizePhones(tx, actor.organizationId, input, ['phone']);
    const location = input.location ? parsePoint(input.location) : null;
    let territoryId = input.territory_id ?? null;
    if (territoryId) await assertTerritories(tx, actor, [territoryId]);
    else if (location) territoryId = await territoryForPoint(tx, location);
    const scope = scopeOf(actor);
    if (scope && (!territoryId || !scope.includes(territoryId))) {
      throw AppError.unprocessable('A sub-administrator must place the merchant in one of his territories', 'TERRITORY_REQUIRED', [
        { field: 'territory_id', message: 'required' },
      ]);
    }
    const id = newId();
    const inserted = await repo.insertMerchant(tx, {
      organizationId: actor.organizationId,
      id,
      ownerUserId: ownerId,
      name: input.name,
      phone: input.phone ?? null,
      address: input.address ?? null,
      location: location ? pointSql(location) : null,
      territoryId,
      commissionPercent: input.commission_percent ?? null,
    });
    if (!inserted) throw AppError.conflict('This user already owns a merchant', 'MERCHANT_EXISTS');
    const row = (await getMerchant(tx, id))!;
    await recordAudit(tx, actor, { action: 'merchant.created', entityType: 'merchant', entityId: id, after: merchantOut(row) });
    return row;
  }

  async function list(tx: Tx, actor: Actor, q: { status?: ApprovalStatus; territory_id?: string; limit?: number; cursor?: string }) {
    const page = pageRequest(q);
    const rows = await repo.listMerchants(tx, {
      status: q.status ?? null,
      territoryId: q.territory_id ?? null,
      scope: scopeOf(actor),
      after: page.after,
      limit: page.limit + 1,
    });
    return toPage(rows, page, merchantOut);
  }

  /** approve / reject / suspend / reactivate along APPROVAL_TRANSITIONS, from the state the action names (409 INVALID_TRANSITION otherwise). */
  async function decide(tx: Tx, actor: Actor, id: string, action: ApprovalAction, reason?: string): Promise<MerchantRow> {
    const before = await getScoped(tx, actor, id);
    const status = await repo.lockMerchantStatus(tx, id);
    const { from, to } = APPROVAL_ACTIONS[action];
    if (status !== from) throw AppError.invalidTransition('Merchant', status, to);
    assertTransition('Merchant', APPROVAL_TRANSITIONS, status, to);
    await repo.setMerchantStatus(tx, id, to, reason ?? null, actor.userId);
    await merchantChanged(ctx, tx, before.owner_user_id);
    const after = (await getMerchant(tx, id))!;
    await recordAudit(tx, actor, {
      action: `merchant.${to}`,
      entityType: 'merchant',
      entityId: id,
      before: merchantOut(before),
      after: merchantOut(after),
    });
    return after;
  }

  /** Sets the platform commission of a merchant (callers enforce their own bounds); audited. */
  async function setMerchantCommission(tx: Tx, actor: Actor, merchantId: string, percent: string): Promise<MerchantRow> {
    if (!PERCENT.test(percent) || Number(percent) > 100)
      throw AppError.badRequest('commission_percent must be between 0 and 100', [{ field: 'commission_percent', message: 'out of range' }]);
    const before = await getScoped(tx, actor, merchantId);
    await repo.setCommission(tx, merchantId, percent);
    await merchantChanged(ctx, tx, before.owner_user_id);
    const after = (await getMerchant(tx, merchantId))!;
    await recordAudit(tx, actor, {
      action: 'merchant.commission_updated',
      entityType: 'merchant',
      entityId: merchantId,
      before: { commission_percent: before.commission_percent },
      after: { commission_percent: after.commission_percent },
    });
    return after;
  }

  /** What the merchant routes ask for, each in the caller's tenant transaction. */
  const requests = {
    list: (actor: Actor, q: Parameters<typeof list>[2]) => ctx.db.withTenant(actor, (tx) => list(tx, actor, q)),
    create: (actor: Actor, input: NewMerchant) => ctx.db.withTenant(actor, (tx) => create(tx, actor, input)),
    decide: (actor: Actor, id: string, action: ApprovalAction, reason?: string) =>
      ctx.db.withTenant(actor, (tx) => decide(tx, actor, id, action, reason)),
  };

  return { getMerchant, merchantOwner, merchantOfUser, getScoped, create, list, decide, setMerchantCommission, requests };
}

export type MerchantService = ReturnType<typeof createMerchantService>;
