import { DEFAULT_PHONE_COUNTRY, isPhoneCountry, toE164 } from '../../platform/phone.js';
import { AppError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { Actor } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import { assertTransition, type Transitions } from '../../platform/state-machine.js';
import { assertObjectLink } from '../storage/index.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import type { OrganizationsContext } from './context.js';
import { createAnnouncedCache, createCache, invalidateOn } from '../../platform/cache.js';
import type { Tx } from '../../platform/db/index.js';
import * as repo from './repo.js';
import type { BrandingPatch, OperatorRow, SettingsPatch, SettingsRow } from './repo.js';
import type { OperatorStatus } from './schemas.js';

export type { OperatorRow, OperatorStatus };
export const OPERATOR_TRANSITIONS: Transitions<OperatorStatus> = {
  pending: ['approved', 'rejected'],
  approved: ['suspended'],
  suspended: ['approved'],
  rejected: [],
};
/** Each action names the states it starts from: reactivate only un-suspends, approve only decides a pending operator. */
export const OPERATOR_ACTIONS = {
  approve: { from: ['pending'], to: 'approved' },
  reject: { from: ['pending'], to: 'rejected' },
  suspend: { from: ['approved'], to: 'suspended' },
  reactivate: { from: ['suspended'], to: 'approved' },
} as const satisfies Record<string, { from: readonly OperatorStatus[]; to: OperatorStatus }>;
export type OperatorAction = keyof typeof OPERATOR_ACTIONS;

export interface OnboardingInput {
  organization_name: string;
  slug?: string;
  legal_name?: string;
  country?: string;
  contact_phone?: string;
  admin: { email: string; password: string; display_name: string; phone?: string };
}

const slugify = (s: string) =>
  s
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 50) || 'org';

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));
const TIME_ZONES = new Set([...Intl.supportedValuesOf('timeZone'), 'UTC']);

/** ISO 4217 currency code known to the runtime (Intl), e.g. BOB, USD. */
export const isCurrency = (c: string) => CURRENCIES.has(c);
/** IANA time zone known to the runtime (Intl), e.g. America/La_Paz, UTC. */
export const isTimeZone = (z: string) => TIME_ZONES.has(z);

/**
 * Whether amounts are recorded in the organization's currency: a catalog item, an order or a trip. Each is asked of its
 * module (commerce, logistics).
 */
async function currencyInUse(ctx: OrganizationsContext, tx: Tx): Promise<boolean> {
  if (await ctx.deps.commerceViews.catalogInUse(tx)) return true;
  if (Object.keys(await ctx.deps.commerceViews.orderStatusCounts(tx, null)).length > 0) return true;
  return Object.keys(await ctx.deps.logistics.tripStatusCounts(tx, null)).length > 0;
}

/**
 * Settings validation: the currency is an ISO 4217 code and the time zone an IANA zone (400 otherwise). One currency per
 * organization: once an item, an order or a trip exists, the currency is fixed (409 CURRENCY_IN_USE), so amounts are never mixed.
 */
async function checkSettings(ctx: OrganizationsContext, tx: Tx, before: { default_currency: string }, patch: SettingsPatch) {
  if (typeof patch.default_currency === 'string' && !isCurrency(patch.default_currency)) {
    throw AppError.badRequest('default_currency must be an ISO 4217 currency code', [
      { field: 'default_currency', message: 'unknown currency' },
    ]);
  }
  if (typeof patch.timezone === 'string' && !isTimeZone(patch.timezone)) {
    throw AppError.badRequest('timezone must be an IANA time zone, e.g. America/La_Paz', [
      { field: 'timezone', message: 'unknown time zone' },
    ]);
  }
  if (typeof patch.default_currency === 'string' && patch.default_currency !== before.default_currency) {
    if (await currencyInUse(ctx, tx)) {
      throw AppError.conflict(
        `Amounts are already recorded in ${before.default_currency}; the organization currency cannot change`,
        'CURRENCY_IN_USE',
      );
    }
  }
}

/** Announced (NOTIFY, payload the organization id) when an organization's settings change: modules caching what they derive from them listen. */
export const ORGANIZATION_SETTINGS_CHANGED = 'organization_settings_changed';
/** Announced (payload the organization id) when its branding (name, colours, logo) changes. */
const ORGANIZATION_BRANDING_CHANGED = 'organization_branding_changed';

type SettingsIn = Pick<SettingsRow, 'require_platform_payment_before_order' | 'default_currency' | 'timezone'>;

export function createOrganizationService(ctx: OrganizationsContext) {
  const { db } = ctx;
  // Operator approval per organization, 5 s; a status change on any instance is announced on 'operator_changed'.
  const approvalCache = createCache<string, boolean>({ ttlMs: 5_000 });
  invalidateOn(ctx, 'operator_changed', approvalCache, (orgId, c) => c.invalidate(orgId));
  // What other modules read of the organization in their transactions (orders, money, messages, tracking pages): cached
  // on each instance per organization, forgotten everywhere when a change commits.
  const settingsCache = createAnnouncedCache<SettingsIn | null>(ctx, ORGANIZATION_SETTINGS_CHANGED);
  const brandingCache = createAnnouncedCache<Awaited<ReturnType<typeof repo.ownBranding>>>(ctx, ORGANIZATION_BRANDING_CHANGED);

  /** Creates an organization with its operator account, settings and first administrator, in one transaction. */
  async function createOrganization(tx: Tx, input: OnboardingInput, status: OperatorStatus = 'pending') {
    const orgId = newId();
    const slug = input.slug ?? `${slugify(input.organization_name)}-${orgId.slice(-6)}`;
    if (await repo.slugTaken(tx, slug)) throw AppError.conflict('This organization slug is taken', 'DUPLICATE_SLUG');
    // Phones typed without a country code are read as numbers of the onboarding country (else BO).
    const country = isPhoneCountry(input.country) ? input.country : DEFAULT_PHONE_COUNTRY;
    // The organization row is created before the tenant context can point at it.
    await repo.insertOrganization(tx, { id: orgId, name: input.organization_name, slug, defaultCountry: country });
    if (input.contact_phone) input = { ...input, contact_phone: toE164(input.contact_phone, country, 'contact_phone') };
    const operatorId = newId();
    await repo.insertOperator(tx, {
      organization_id: orgId,
      id: operatorId,
      status,
      legal_name: input.legal_name ?? input.organization_name,
      contact_email: input.admin.email.toLowerCase(),
      contact_phone: input.contact_phone ?? null,
      country: input.country ?? null,
    });
    const admin = await ctx.deps.identity.insertUser(tx, orgId, { ...input.admin, role: 'administrator' });
    await recordAudit(
      tx,
      { organizationId: orgId, userId: admin.id, requestId: '' },
      {
        action: 'operator.onboarded',
        entityType: 'operator',
        entityId: operatorId,
        after: { status, legal_name: input.legal_name ?? input.organization_name },
      },
    );
    return { organization_id: orgId, slug, operator_id: operatorId, status, admin_user_id: admin.id };
  }

  return {
    createOrganization,

    /**
     * Public onboarding: a new organization with its own first administrator. An email that already
     * has accounts elsewhere gets one more account in the new organization; existing accounts are never
     * touched (login lets the password decide). Rate limited per client address and per email (per
     * hour, counters in the database); the answer does not depend on whether the email is registered.
     */
    async onboard(input: OnboardingInput, ip: string) {
      const identity = ctx.deps.identity;
      await identity.rateLimit(`onboarding:ip:${ip}`, ctx.config.onboardingRateLimitPerIp, 3600, 'onboarding requests from this address');
      await identity.rateLimit(
        `onboarding:email:${input.admin.email.trim().toLowerCase()}`,
        ctx.config.onboardingRateLimitPerEmail,
        3600,
        'onboarding requests for this email',
      );
      return db.withSystem((tx) => createOrganization(tx, input));
    },

    async operatorApproved(organizationId: string): Promise<boolean> {
      return approvalCache.get(organizationId, () =>
        db.withSystem(async (tx) => (await repo.operatorStatus(tx, organizationId)) === 'approved'),
      );
    },

    /** Platform operators see every operator account; an organization administrator sees his own. */
    async listOperators(actor: Actor, q: { status?: OperatorStatus; limit?: number; cursor?: string }) {
      const page = pageRequest(q);
      const run = async (tx: Tx) =>
        toPage(await repo.listOperators(tx, { status: q.status ?? null, after: page.after, limit: page.limit + 1 }), page);
      return actor.kind === 'platform' ? db.withSystem(run) : db.withTenant(actor, run);
    },

    async decideOperator(actor: Actor, operatorId: string, action: OperatorAction, reason?: string) {
      const { to, from } = OPERATOR_ACTIONS[action];
      return db.withSystem(async (tx) => {
        const op = await repo.lockOperator(tx, operatorId);
        if (!op) throw AppError.notFound('Operator');
        if (!(from as readonly OperatorStatus[]).includes(op.status)) throw AppError.invalidTransition('operator', op.status, to);
        assertTransition('operator', OPERATOR_TRANSITIONS, op.status, to);
        const updated = await repo.decideOperator(tx, op, to, reason ?? null, actor.userId);
        await recordAudit(
          tx,
          { organizationId: op.organization_id, userId: actor.userId, requestId: actor.requestId },
          {
            action: `operator.${action}`,
            entityType: 'operator',
            entityId: op.id,
            before: { status: op.status },
            after: { status: to, reason: reason ?? null },
          },
        );
        approvalCache.invalidate(op.organization_id);
        return updated;
      });
    },

    async getSettings(actor: Actor) {
      return db.withTenant(actor, async (tx) => {
        const settings = await repo.findSettings(tx);
        if (!settings) throw AppError.notFound('Settings');
        return settings;
      });
    },

    async updateSettings(actor: Actor, patch: SettingsPatch) {
      return db.withTenant(actor, async (tx) => {
        const before = await repo.findSettings(tx, true);
        if (!before) throw AppError.notFound('Settings');
        if (Object.keys(patch).length === 0) return before;
        await checkSettings(ctx, tx, before, patch);
        if (typeof patch.default_country === 'string' && !isPhoneCountry(patch.default_country)) {
          throw AppError.badRequest('default_country must be an ISO 3166-1 alpha-2 country code, e.g. BO', [
            { field: 'default_country', message: 'unknown country' },
          ]);
        }
        // A support phone typed without a country code is read with the (new) default country.
        if (typeof patch.support_phone === 'string') {
          patch = {
            ...patch,
            support_phone: toE164(patch.support_phone, patch.default_country ?? before.default_country, 'support_phone'),
          };
        }
        const after = await repo.updateSettings(tx, actor.userId, patch);
        await settingsCache.changed(tx, actor.organizationId);
        await recordAudit(tx, actor, {
          action: 'settings.updated',
          entityType: 'organization_settings',
          entityId: actor.organizationId,
          before,
          after,
        });
        return after;
      });
    },

    /** Read by other modules (orders, money): the settings of the caller's organization (cached in a tenant transaction). */
    async settingsIn(tx: Tx): Promise<SettingsIn> {
      const found = tx.organizationId
        ? await settingsCache.get(tx.organizationId, () => repo.findSettings(tx))
        : await repo.findSettings(tx);
      return found ?? { require_platform_payment_before_order: false, default_currency: 'BOB', timezone: 'America/La_Paz' };
    },

    async updateBranding(actor: Actor, organizationId: string, patch: BrandingPatch) {
      if (organizationId !== actor.organizationId) throw AppError.notFound('Organization');
      return db.withTenant(actor, async (tx) => {
        const before = await repo.findBranding(tx, organizationId, true);
        if (!before) throw AppError.notFound('Organization');
        if (patch.logo_object_id) await assertObjectLink(ctx, tx, actor, patch.logo_object_id, ['avatar', 'other']);
        if (Object.keys(patch).length === 0) return before;
        const after = await repo.updateBranding(tx, organizationId, patch);
        await brandingCache.changed(tx, organizationId);
        await recordAudit(tx, actor, {
          action: 'organization.branding_updated',
          entityType: 'organization',
          entityId: organizationId,
          before,
          after,
        });
        return after;
      });
    },

    /** The caller's organization's name, colours and logo (none when it does not exist); cached in a tenant transaction. */
    branding: (tx: Tx) => (tx.organizationId ? brandingCache.get(tx.organizationId, () => repo.ownBranding(tx)) : repo.ownBranding(tx)),
  };
}

export type OrganizationService = ReturnType<typeof createOrganizationService>;
