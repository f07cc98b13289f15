import { DEFAULT_PHONE_COUNTRY, isPhoneCountry, toE164 } from '../../platform/phone.js';
import { AppError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { tenantOf, type Actor } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import { assertTransition, type Transitions } from '../../platform/state-machine.js';
import { assertObjectLink } from '../../platform/storage-links.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import type { OrganizationsContext } from './index.js';
import { createCache, invalidateOn } from '../../platform/cache.js';
import type { Tx } from '../../platform/db/index.js';

export type OperatorStatus = 'pending' | 'approved' | 'rejected' | 'suspended';
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

export interface OperatorRow {
  organization_id: string;
  id: string;
  status: OperatorStatus;
  legal_name: string;
  contact_email: string;
  contact_phone: string | null;
  country: string | null;
  status_reason: string | null;
  decided_by_user_id: string | null;
  decided_at: Date | null;
  created_at: Date;
  updated_at: Date;
  organization_name?: string;
}

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

const SETTINGS_COLUMNS = 'require_platform_payment_before_order, default_currency, timezone, default_country, support_phone, support_email, updated_at';

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));
const TIME_ZONES = new Set([...Intl.supportedValuesOf('timeZone'), 'UTC']);

/** ISO 4217 currency code known to the runtime (Intl), e.g. BOB, USD. */
export const isCurrency = (c: string) => CURRENCIES.has(c);
/** IANA time zone known to the runtime (Intl), e.g. America/La_Paz, UTC. */
export const isTimeZone = (z: string) => TIME_ZONES.has(z);

/**
 * Settings validation: the currency is an ISO 4217 code and the time zone an IANA zone (400 otherwise). One currency per
 * organization: once an item, an order or a trip exists, the currency is fixed (409 CURRENCY_IN_USE), so amounts are never mixed.
 */
async function checkSettings(tx: Tx, before: { default_currency: string }, patch: Record<string, unknown>) {
  if (typeof patch.default_currency === 'string' && !isCurrency(patch.default_currency)) {
    throw AppError.badRequest('default_currency must be an ISO 4217 currency code', [{ field: 'default_currency', message: 'unknown currency' }]);
  }
  if (typeof patch.timezone === 'string' && !isTimeZone(patch.timezone)) {
    throw AppError.badRequest('timezone must be an IANA time zone, e.g. America/La_Paz', [{ field: 'timezone', message: 'unknown time zone' }]);
  }
  if (typeof patch.default_currency === 'string' && patch.default_currency !== before.default_currency) {
    const { rows } = await tx.query<{ used: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM catalog_item) OR EXISTS (SELECT 1 FROM merchant_order) OR EXISTS (SELECT 1 FROM trip) AS used`,
    );
    if (rows[0]?.used) {
      throw AppError.conflict(`Amounts are already recorded in ${before.default_currency}; the organization currency cannot change`, 'CURRENCY_IN_USE');
    }
  }
}

export function createOrganizationService(ctx: OrganizationsContext) {
  const { db } = ctx;
  // Operator approval per organization, 5 s; a status change on any instance is announced on 'operator_changed'.
  const approvalCache = createCache<string, boolean>({ ttlMs: 5_000 });
  invalidateOn(ctx, 'operator_changed', approvalCache, (orgId, c) => c.invalidate(orgId));

  /** Creates an organization with its operator account, settings and first administrator, in one transaction. */
  async function createOrganization(tx: Tx, input: OnboardingInput, status: OperatorStatus = 'pending') {
    const orgId = newId();
    const slug = input.slug ?? `${slugify(input.organization_name)}-${orgId.slice(-6)}`;
    const taken = await tx.query('SELECT 1 FROM organization WHERE slug = $1', [slug]);
    if (taken.rowCount) throw AppError.conflict('This organization slug is taken', 'DUPLICATE_SLUG');
    // The organization row is created before the tenant context can point at it.
    await tx.query('INSERT INTO organization (id, name, slug) VALUES ($1, $2, $3)', [orgId, input.organization_name, slug]);
    await tx.query("SELECT set_config('app.organization_id', $1, true)", [orgId]);
    // Phones typed without a country code are read as numbers of the onboarding country (else BO).
    const country = isPhoneCountry(input.country) ? input.country : DEFAULT_PHONE_COUNTRY;
    await tx.query('INSERT INTO organization_settings (organization_id, default_country) VALUES ($1, $2)', [orgId, country]);
    if (input.contact_phone) input = { ...input, contact_phone: toE164(input.contact_phone, country, 'contact_phone') };
    const operatorId = newId();
    await tx.query(
      'INSERT INTO operator (organization_id, id, status, legal_name, contact_email, contact_phone, country) VALUES ($1,$2,$3,$4,$5,$6,$7)',
      [orgId, operatorId, status, input.legal_name ?? input.organization_name, input.admin.email.toLowerCase(), input.contact_phone ?? null, input.country ?? null],
    );
    const admin = await ctx.deps.identity.insertUser(tx, orgId, { ...input.admin, role: 'administrator' });
    await recordAudit(tx, { organizationId: orgId, userId: admin.id, requestId: '' }, {
      action: 'operator.onboarded',
      entityType: 'operator',
      entityId: operatorId,
      after: { status, legal_name: input.legal_name ?? input.organization_name },
    });
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
      await identity.rateLimit(`onboarding:email:${input.admin.email.trim().toLowerCase()}`, ctx.config.onboardingRateLimitPerEmail, 3600, 'onboarding requests for this email');
      return db.withSystem((tx) => createOrganization(tx, input));
    },

    async operatorApproved(organizationId: string): Promise<boolean> {
      return approvalCache.get(organizationId, () =>
        db.withSystem(async (tx) => {
          const { rows } = await tx.query<{ status: string }>('SELECT status FROM operator WHERE organization_id = $1', [organizationId]);
          return rows[0]?.status === 'approved';
        }),
      );
    },

    /** Platform operators see every operator account; an organization administrator sees his own. */
    async listOperators(actor: Actor, q: { status?: OperatorStatus; limit?: number; cursor?: string }) {
      const page = pageRequest(q);
      const run = async (tx: Tx) => {
        const { rows } = await tx.query<OperatorRow>(
          `SELECT op.*, o.name AS organization_name FROM operator op JOIN organization o ON o.id = op.organization_id
            WHERE ($1::text IS NULL OR op.status = $1) AND ($2::text IS NULL OR op.id < $2)
            ORDER BY op.id DESC LIMIT $3`,
          [q.status ?? null, page.after, page.limit + 1],
        );
        return toPage(rows, page);
      };
      return actor.kind === 'platform' ? db.withSystem(run) : db.withTenant(tenantOf(actor), run);
    },

    async decideOperator(actor: Actor, operatorId: string, action: OperatorAction, reason?: string) {
      const { to, from } = OPERATOR_ACTIONS[action];
      return db.withSystem(async (tx) => {
        const { rows } = await tx.query<OperatorRow>('SELECT * FROM operator WHERE id = $1 FOR UPDATE', [operatorId]);
        const op = rows[0];
        if (!op) throw AppError.notFound('Operator');
        if (!(from as readonly OperatorStatus[]).includes(op.status)) throw AppError.invalidTransition('operator', op.status, to);
        assertTransition('operator', OPERATOR_TRANSITIONS, op.status, to);
        const { rows: updated } = await tx.query<OperatorRow>(
          `UPDATE operator SET status = $3, status_reason = $4, decided_by_user_id = $5, decided_at = now(), updated_at = now()
            WHERE organization_id = $1 AND id = $2 RETURNING *`,
          [op.organization_id, op.id, to, reason ?? null, actor.userId],
        );
        await recordAudit(tx, { organizationId: op.organization_id, userId: actor.userId, requestId: actor.requestId }, {
          action: `operator.${action}`,
          entityType: 'operator',
          entityId: op.id,
          before: { status: op.status },
          after: { status: to, reason: reason ?? null },
        });
        await tx.query("SELECT pg_notify('operator_changed', $1)", [op.organization_id]);
        approvalCache.invalidate(op.organization_id);
        return updated[0];
      });
    },

    async getSettings(actor: Actor) {
      return db.withTenant(tenantOf(actor), async (tx) => {
        const { rows } = await tx.query(`SELECT ${SETTINGS_COLUMNS} FROM organization_settings`);
        if (!rows[0]) throw AppError.notFound('Settings');
        return rows[0];
      });
    },

    async updateSettings(actor: Actor, patch: Record<string, unknown>) {
      return db.withTenant(tenantOf(actor), async (tx) => {
        const { rows: before } = await tx.query(`SELECT ${SETTINGS_COLUMNS} FROM organization_settings FOR UPDATE`);
        if (!before[0]) throw AppError.notFound('Settings');
        const fields = Object.keys(patch);
        if (fields.length === 0) return before[0];
        await checkSettings(tx, before[0] as { default_currency: string }, patch);
        if (typeof patch.default_country === 'string' && !isPhoneCountry(patch.default_country)) {
          throw AppError.badRequest('default_country must be an ISO 3166-1 alpha-2 country code, e.g. BO', [{ field: 'default_country', message: 'unknown country' }]);
        }
        // A support phone typed without a country code is read with the (new) default country.
        if (typeof patch.support_phone === 'string') {
          patch = { ...patch, support_phone: toE164(patch.support_phone, (patch.default_country as string | undefined) ?? (before[0] as { default_country: string }).default_country, 'support_phone') };
        }
        const sets = fields.map((f, i) => `${f} = $${i + 2}`).join(', ');
        const { rows } = await tx.query(
          `UPDATE organization_settings SET ${sets}, updated_by_user_id = $1, updated_at = now() RETURNING ${SETTINGS_COLUMNS}`,
          [actor.userId, ...fields.map((f) => patch[f])],
        );
        await recordAudit(tx, actor, { action: 'settings.updated', entityType: 'organization_settings', entityId: actor.organizationId, before: before[0], after: rows[0] });
        return rows[0];
      });
    },

    /** Read by other modules (orders): the organization's settings in the caller's transaction. */
    async settingsIn(tx: Tx): Promise<{ require_platform_payment_before_order: boolean; default_currency: string; timezone: string }> {
      const { rows } = await tx.query(`SELECT ${SETTINGS_COLUMNS} FROM organization_settings`);
      return rows[0] ?? { require_platform_payment_before_order: false, default_currency: 'BOB', timezone: 'America/La_Paz' };
    },

    async updateBranding(actor: Actor, organizationId: string, patch: { name?: string; primary_color?: string | null; secondary_color?: string | null; logo_object_id?: string | null }) {
      if (organizationId !== actor.organizationId) throw AppError.notFound('Organization');
      return db.withTenant(tenantOf(actor), async (tx) => {
        const { rows: before } = await tx.query('SELECT id, name, primary_color, secondary_color, logo_object_id FROM organization WHERE id = $1 FOR UPDATE', [organizationId]);
        if (!before[0]) throw AppError.notFound('Organization');
        if (patch.logo_object_id) await assertObjectLink(ctx, tx, actor, patch.logo_object_id, ['avatar', 'other']);
        const fields = Object.keys(patch);
        if (fields.length === 0) return before[0];
        const sets = fields.map((f, i) => `${f} = $${i + 2}`).join(', ');
        const { rows } = await tx.query(
          `UPDATE organization SET ${sets}, updated_at = now() WHERE id = $1 RETURNING id, name, primary_color, secondary_color, logo_object_id`,
          [organizationId, ...fields.map((f) => (patch as Record<string, unknown>)[f])],
        );
        await recordAudit(tx, actor, { action: 'organization.branding_updated', entityType: 'organization', entityId: organizationId, before: before[0], after: rows[0] });
        return rows[0];
      });
    },

    async branding(tx: Tx) {
      const { rows } = await tx.query('SELECT id, name, slug, primary_color, secondary_color, logo_object_id FROM organization');
      return rows[0];
    },
  };
}

export type OrganizationService = ReturnType<typeof createOrganizationService>;
