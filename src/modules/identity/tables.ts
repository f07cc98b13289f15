import { APP_ROLES } from '../../platform/auth.js';
import { organization } from '../organizations/tables.js';
import { boolean, foreignKey, index, pgTable, pgView, primaryKey, text, timestamp, unique } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const users = pgTable(
  'users',
  {
    organizationId: text('organization_id')
      .notNull()
      .references(() => organization.id),
    id: text('id').notNull(),
    email: text('email'),
    phone: text('phone'),
    passwordHash: text('password_hash').notNull(),
    displayName: text('display_name').notNull(),
    role: text('role', { enum: APP_ROLES }).notNull(),
    dispatch: boolean('dispatch').notNull().default(false),
    subadmin: boolean('subadmin').notNull().default(false),
    platformAdmin: boolean('platform_admin').notNull().default(false),
    active: boolean('active').notNull().default(true),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    unique('users_org_email_uq').on(t.organizationId, t.email),
    unique('users_org_phone_uq').on(t.organizationId, t.phone),
    index('users_email_idx').on(t.email),
    index('users_phone_idx').on(t.phone),
  ],
);

/** A login session = one refresh-token family. Revoking it kills every token of the family. */
export const authSession = pgTable(
  'auth_session',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    userId: text('user_id').notNull(),
    userAgent: text('user_agent'),
    createdAt: ts('created_at').notNull().defaultNow(),
    revokedAt: ts('revoked_at'),
    revokedReason: text('revoked_reason'),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId, t.userId], foreignColumns: [users.organizationId, users.id] }),
  ],
);

export const refreshToken = pgTable(
  'refresh_token',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    sessionId: text('session_id').notNull(),
    tokenHash: text('token_hash').notNull(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    unique('refresh_token_hash_uq').on(t.organizationId, t.tokenHash),
    index('refresh_token_hash_idx').on(t.tokenHash),
    foreignKey({ columns: [t.organizationId, t.sessionId], foreignColumns: [authSession.organizationId, authSession.id] }),
  ],
);

/**
 * The published read of a user for other modules' lists (a trip's driver name, a sub-administrator's contact):
 * they join this view, never `users`, so the login columns stay identity's own. `security_invoker`: the reader's
 * row-level security applies, as it would on the table.
 */
export const userContact = pgView('user_contact')
  .with({ securityInvoker: true })
  .as((qb) =>
    qb
      .select({
        organizationId: users.organizationId,
        id: users.id,
        displayName: users.displayName,
        phone: users.phone,
        email: users.email,
        active: users.active,
      })
      .from(users),
  );
