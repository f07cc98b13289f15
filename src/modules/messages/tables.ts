import { sql } from 'drizzle-orm';
import { check, foreignKey, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { sqlList } from '../../platform/tables.js';
import { organization } from '../organizations/tables.js';

/** The languages recipient messages are written in; Spanish is the default. */
export const LANGUAGES = ['es', 'en'] as const;
/** Who last changed a recipient's preference: staff, or the recipient himself (tracking link, customer account). */
export const PREFERENCE_CHANGERS = ['staff', 'recipient'] as const;

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * One per organization, created on first change: when "arriving soon" is sent, how often an ETA message may go
 * to one trip, the language of recipients who chose none, and the templates changed from the built-in ones
 * (`{ "<kind>": { "es": "...", "en": "..." } }`).
 */
export const recipientMessageSettings = pgTable(
  'recipient_message_settings',
  {
    organizationId: text('organization_id').notNull(),
    arrivingSoonMin: integer('arriving_soon_min').notNull().default(10),
    etaMessagePeriodMin: integer('eta_message_period_min').notNull().default(30),
    defaultLanguage: text('default_language').notNull().default('es'),
    templates: jsonb('templates').notNull().default({}),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId] }),
    foreignKey({ columns: [t.organizationId], foreignColumns: [organization.id] }),
    check('recipient_message_settings_language_ck', sql`default_language IN ${sqlList(LANGUAGES)}`),
    check('recipient_message_settings_minutes_ck', sql`arriving_soon_min BETWEEN 1 AND 240 AND eta_message_period_min BETWEEN 1 AND 1440`),
  ],
);

/** A recipient's choices, by phone (E.164) within an organization: stop the messages, and his language. */
export const recipientPreference = pgTable(
  'recipient_preference',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    phone: text('phone').notNull(),
    language: text('language'),
    optedOutAt: ts('opted_out_at'),
    /** Who last changed it: `staff` or `recipient` (from his tracking link). */
    changedBy: text('changed_by').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId], foreignColumns: [organization.id] }),
    uniqueIndex('recipient_preference_phone_uq').on(t.organizationId, t.phone),
    check('recipient_preference_language_ck', sql`language IS NULL OR language IN ${sqlList(LANGUAGES)}`),
    check('recipient_preference_changed_by_ck', sql`changed_by IN ${sqlList(PREFERENCE_CHANGERS)}`),
  ],
);

/**
 * Every recipient message queued (chat outbox or push): at most one per subject (trip or order), kind and channel,
 * except "arriving soon", which is throttled per trip by the period setting instead.
 */
export const recipientMessage = pgTable(
  'recipient_message',
  {
    organizationId: text('organization_id').notNull(),
    id: text('id').notNull(),
    /** The trip, or the order before it has one (an order confirmed). */
    subjectId: text('subject_id').notNull(),
    kind: text('kind').notNull(),
    channel: text('channel').notNull(),
    language: text('language').notNull(),
    destination: text('destination').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({ columns: [t.organizationId], foreignColumns: [organization.id] }),
    check('recipient_message_channel_ck', sql`channel IN ('chat', 'push')`),
    uniqueIndex('recipient_message_once_uq')
      .on(t.organizationId, t.subjectId, t.kind, t.channel)
      .where(sql`kind <> 'arriving_soon'`),
    index('recipient_message_subject_idx').on(t.organizationId, t.subjectId, t.kind, t.createdAt),
  ],
);
