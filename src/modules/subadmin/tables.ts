import { sql } from 'drizzle-orm';
import { boolean, check, foreignKey, index, jsonb, numeric, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { organization } from '../organizations/tables.js';
import { users } from '../identity/tables.js';
import { territory } from '../logistics/tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
const percent = (name: string) => numeric(name, { precision: 5, scale: 2 });

/** A sub-administrator: an `administrator` user with `subadmin = true`, confined to his territories and permission keys. */
export const subadminProfile = pgTable(
  'subadmin_profile',
  {
    organizationId: text('organization_id')
      .notNull()
      .references(() => organization.id),
    userId: text('user_id').notNull(),
    displayName: text('display_name').notNull(),
    active: boolean('active').notNull().default(true),
    permissions: jsonb('permissions').notNull().default({}),
    parentSubadminUserId: text('parent_subadmin_user_id'),
    createdByUserId: text('created_by_user_id'),
    commissionMinPercent: percent('commission_min_percent'),
    commissionMaxPercent: percent('commission_max_percent'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.userId] }),
    foreignKey({ columns: [t.organizationId, t.userId], foreignColumns: [users.organizationId, users.id] }),
    foreignKey({ columns: [t.organizationId, t.parentSubadminUserId], foreignColumns: [t.organizationId, t.userId] }),
    index('subadmin_profile_parent_idx').on(t.organizationId, t.parentSubadminUserId),
    check('subadmin_commission_range_ck', sql`${t.commissionMinPercent} BETWEEN 0 AND 100 AND ${t.commissionMaxPercent} BETWEEN 0 AND 100`),
    check(
      'subadmin_commission_order_ck',
      sql`${t.commissionMinPercent} IS NULL OR ${t.commissionMaxPercent} IS NULL OR ${t.commissionMinPercent} <= ${t.commissionMaxPercent}`,
    ),
  ],
);

/** The territories a user (sub-administrator) is confined to; a (user_id, territory_id) pair is unique. */
export const userTerritory = pgTable(
  'user_territory',
  {
    organizationId: text('organization_id').notNull(),
    userId: text('user_id').notNull(),
    territoryId: text('territory_id').notNull(),
    createdByUserId: text('created_by_user_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.userId, t.territoryId] }),
    index('user_territory_territory_idx').on(t.organizationId, t.territoryId),
    foreignKey({ columns: [t.organizationId, t.userId], foreignColumns: [users.organizationId, users.id] }).onDelete('cascade'),
    foreignKey({ columns: [t.organizationId, t.territoryId], foreignColumns: [territory.organizationId, territory.id] }),
  ],
);

/** A zone banner shown in the customer marketplace of its territories while valid and active. */
export const zoneBanner = pgTable(
  'zone_banner',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    title: text('title').notNull(),
    body: text('body'),
    imageStorageObjectId: text('image_storage_object_id'),
    linkUrl: text('link_url'),
    validFrom: ts('valid_from').notNull().defaultNow(),
    validUntil: ts('valid_until'),
    active: boolean('active').notNull().default(true),
    createdByUserId: text('created_by_user_id').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    check('zone_banner_validity_ck', sql`${t.validUntil} IS NULL OR ${t.validUntil} > ${t.validFrom}`),
  ],
);

/** Which territories a banner is shown in; a (banner_id, territory_id) pair is unique. */
export const bannerTerritory = pgTable(
  'banner_territory',
  {
    organizationId: text('organization_id').notNull(),
    bannerId: text('banner_id').notNull(),
    territoryId: text('territory_id').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.bannerId, t.territoryId] }),
    index('banner_territory_territory_idx').on(t.organizationId, t.territoryId),
    foreignKey({ columns: [t.organizationId, t.bannerId], foreignColumns: [zoneBanner.organizationId, zoneBanner.id] }).onDelete('cascade'),
    foreignKey({ columns: [t.organizationId, t.territoryId], foreignColumns: [territory.organizationId, territory.id] }),
  ],
);
