import { boolean, index, pgTable, pgView, primaryKey, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { OPERATOR_STATUSES } from './schemas.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** The tenant root. */
export const organization = pgTable('organization', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  slug: text('slug').notNull().unique(),
  primaryColor: text('primary_color'),
  secondaryColor: text('secondary_color'),
  logoObjectId: text('logo_object_id'),
  createdAt: ts('created_at').notNull().defaultNow(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/** The operator account of an organization on the platform: pending until a platform operator approves it. */
export const operator = pgTable(
  'operator',
  {
    organizationId: text('organization_id')
      .notNull()
      .references(() => organization.id),
    id: text('id').notNull(),
    status: text('status', { enum: OPERATOR_STATUSES }).notNull().default('pending'),
    legalName: text('legal_name').notNull(),
    contactEmail: text('contact_email').notNull(),
    contactPhone: text('contact_phone'),
    country: text('country'),
    statusReason: text('status_reason'),
    decidedByUserId: text('decided_by_user_id'),
    decidedAt: ts('decided_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    unique('operator_org_uq').on(t.organizationId),
    index('operator_status_idx').on(t.status, t.id),
  ],
);

export const organizationSettings = pgTable('organization_settings', {
  organizationId: text('organization_id')
    .primaryKey()
    .references(() => organization.id),
  requirePlatformPaymentBeforeOrder: boolean('require_platform_payment_before_order').notNull().default(false),
  defaultCurrency: text('default_currency').notNull().default('BOB'),
  timezone: text('timezone').notNull().default('America/La_Paz'),
  /** ISO 3166-1 alpha-2: the country of phone numbers typed without a country code (normalised to E.164). */
  defaultCountry: text('default_country').notNull().default('BO'),
  supportPhone: text('support_phone'),
  supportEmail: text('support_email'),
  updatedByUserId: text('updated_by_user_id'),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/**
 * The published read of an organization's currency for other modules' SQL (logistics prices trips in it on every
 * settings read): they name this view, never `organization_settings`. `security_invoker`: the reader's row-level
 * security applies.
 */
export const organizationCurrency = pgView('organization_currency')
  .with({ securityInvoker: true })
  .as((qb) =>
    qb
      .select({ organizationId: organizationSettings.organizationId, defaultCurrency: organizationSettings.defaultCurrency })
      .from(organizationSettings),
  );

/**
 * The published read of an organization's name for other modules' SQL (identity answers GET /me with it in the same
 * statement as the user: the hottest read). `security_invoker`: the reader's row-level security applies.
 */
export const organizationName = pgView('organization_name')
  .with({ securityInvoker: true })
  .as((qb) => qb.select({ id: organization.id, name: organization.name }).from(organization));
