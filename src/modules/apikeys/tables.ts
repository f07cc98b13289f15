import { sql } from 'drizzle-orm';
import { foreignKey, index, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { organization } from '../organizations/tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * An API key of an organization administrator or a merchant user (its owner): it acts as the owner, narrowed to
 * `scopes`. Only the SHA-256 of its secret is stored (the secret is 32 random bytes, shown once); `secret_hint` is
 * the secret's last characters. Revoked keys stay listed (revoked_at) and are refused.
 */
export const apiKey = pgTable(
  'api_key',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    ownerUserId: text('owner_user_id').notNull(),
    name: text('name').notNull(),
    scopes: text('scopes').array().notNull(),
    secretHash: text('secret_hash').notNull(),
    secretHint: text('secret_hint').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId], foreignColumns: [organization.id] }),
    index('api_key_id_idx').on(t.id),
    index('api_key_owner_idx')
      .on(t.organizationId, t.ownerUserId)
      .where(sql`revoked_at IS NULL`),
  ],
);
