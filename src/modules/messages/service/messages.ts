import type { Actor } from '../../../platform/auth.js';
import { recordAudit } from '../../../platform/audit.js';
import type { Tx } from '../../../platform/db/index.js';
import { AppError } from '../../../platform/errors.js';
import type { StoredEvent } from '../../../platform/events.js';
import { newId } from '../../../platform/ids.js';
import { createAnnouncedCache } from '../../../platform/cache.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import { normalizePhones } from '../../../platform/phone.js';
import type { MessagesContext } from '../context.js';
import * as repo from '../repo.js';
import type { MessageSettingsRow, PreferenceRow } from '../repo.js';
import { clockTime, DEFAULT_TEMPLATES, render, unknownPlaceholders, type MessageValues } from './templates.js';
import { LANGUAGES, MESSAGE_KINDS, PLACEHOLDERS, type Language, type MessageKind, type PreferenceChanger } from '../schemas.js';

type Overrides = Partial<Record<MessageKind, Partial<Record<Language, string>>>>;

export interface SettingsPatch {
  arriving_soon_min?: number;
  eta_message_period_min?: number;
  default_language?: Language;
  /** A null body puts the built-in text back. */
  templates?: { kind: MessageKind; language: Language; body: string | null }[];
}

/** The trip events that tell the recipient something, and what. */
const EVENT_KINDS: Record<string, MessageKind> = {
  'trip.assigned': 'driver_assigned',
  'trip.completed': 'delivered',
  'trip.delivery_failed': 'failed',
};

const defaults = (organizationId: string): MessageSettingsRow => ({
  organizationId,
  arrivingSoonMin: 10,
  etaMessagePeriodMin: 30,
  defaultLanguage: 'es',
  templates: {},
  updatedAt: new Date(0),
});

export const preferenceOut = (p: PreferenceRow) => ({
  id: p.id,
  phone: p.phone,
  opted_out: p.optedOutAt !== null,
  opted_out_at: p.optedOutAt,
  language: (p.language as Language | null) ?? null,
  changed_by: p.changedBy as PreferenceChanger,
  updated_at: p.updatedAt,
});

/** A 400 naming every unknown placeholder of the given templates; nothing is written. */
function assertKnownPlaceholders(templates: { kind: string; language: string; body: string | null }[]) {
  const errors = templates.flatMap((t, i) =>
    unknownPlaceholders(t.body ?? '').map((name) => ({
      field: `templates/${i}/body`,
      message: `unknown placeholder {${name}} in ${t.kind} (${t.language}); known: ${PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}`,
    })),
  );
  if (errors.length)
    throw AppError.badRequest(
      `Unknown placeholder ${errors.map((e) => e.message.split(' ')[2]).join(', ')}`,
      errors,
      'UNKNOWN_PLACEHOLDER',
    );
}

export function createMessagesService(ctx: MessagesContext) {
  const { logistics, chat, notifications, organizations } = ctx.deps;

  // Per organization, read by every message to a recipient; a settings update announces it.
  const settingsCache = createAnnouncedCache<MessageSettingsRow>(ctx, 'message_settings_changed');
  /** The settings as stored (or the defaults), read in the caller's transaction. */
  const read = async (tx: Tx, organizationId: string) => (await repo.findSettings(tx, organizationId)) ?? defaults(organizationId);
  /** The settings the messages follow: cached per organization, read in the caller's transaction on a miss. */
  const load = (tx: Tx, organizationId: string) => settingsCache.get(organizationId, () => read(tx, organizationId));
  const templateOf = (s: MessageSettingsRow, kind: MessageKind, language: Language) =>
    (s.templates as Overrides)[kind]?.[language] ?? DEFAULT_TEMPLATES[kind][language];

  const settingsOut = (s: MessageSettingsRow) => ({
    arriving_soon_min: s.arrivingSoonMin,
    eta_message_period_min: s.etaMessagePeriodMin,
    default_language: s.defaultLanguage as Language,
    placeholders: [...PLACEHOLDERS],
    templates: MESSAGE_KINDS.flatMap((kind) =>
      LANGUAGES.map((language) => ({
        kind,
        language,
        body: templateOf(s, kind, language),
        customized: (s.templates as Overrides)[kind]?.[language] !== undefined,
      })),
    ),
  });

  /** The values of a trip's message (the merchant's name, or the organization's for a trip without one). */
  async function valuesOf(
    tx: Tx,
    trip: { merchant_id: string | null },
    extra: { name: string | null; url: string | null; etaAt?: Date | null },
  ): Promise<MessageValues> {
    const [org, orgSettings, merchant] = await Promise.all([
      organizations.branding(tx) as Promise<{ name: string } | undefined>,
      organizations.settingsIn(tx),
      trip.merchant_id ? logistics.getMerchant(tx, trip.merchant_id) : Promise.resolve(null),
    ]);
    const eta = extra.etaAt ?? null;
    return {
      recipient_name: extra.name ?? '',
      merchant_name: merchant?.name ?? org?.name ?? '',
      organization_name: org?.name ?? '',
      eta_time: eta ? clockTime(eta, orgSettings.timezone) : '',
      eta_minutes: eta ? String(Math.max(1, Math.round((eta.getTime() - Date.now()) / 60_000))) : '',
      tracking_link: extra.url ?? '',
    };
  }

  /**
   * Queues the message of `kind` about a trip, in the caller's transaction: to the phone of its recipient without
   * an account (chat outbox, through the merchant's channel, unless he opted out) and to its customer with an
   * account (inbox and push). Once per trip, kind and channel; "arriving soon" at most once per period instead.
   */
  async function tellTrip(tx: Tx, organizationId: string, tripId: string, kind: MessageKind, etaAt: Date | null = null): Promise<void> {
    const s = await load(tx, organizationId);
    // An arriving-soon message is due once per period: decided before the trip is read (most ETA updates stop here).
    if (kind === 'arriving_soon') {
      await repo.lockSubject(tx, tripId);
      const last = await repo.lastMessageAt(tx, tripId, kind);
      if (last && Date.now() - last.getTime() < s.etaMessagePeriodMin * 60_000) return;
    }
    const t = await logistics.getTrip(tx, tripId);
    if (!t) return;
    const contact = t.customer_user_id ? null : await logistics.recipientContact(tx, tripId);
    if (contact?.phone && t.merchant_id) {
      const pref = await repo.findPreference(tx, contact.phone);
      if (!pref?.optedOutAt) {
        const language = ((pref?.language ?? s.defaultLanguage) as Language) ?? 'es';
        const claimed = await repo.claimMessage(tx, {
          organizationId,
          id: newId(),
          subjectId: tripId,
          kind,
          channel: 'chat',
          language,
          destination: contact.phone,
        });
        if (claimed) {
          const text = render(templateOf(s, kind, language), await valuesOf(tx, t, { name: contact.name, url: contact.url, etaAt }));
          await chat.enqueueRecipientMessage(tx, {
            organizationId,
            merchantId: t.merchant_id,
            orderId: t.order_id,
            expressRequestId: t.express_request_id,
            territoryId: t.territory_id,
            tripId,
            destinationPhone: contact.phone,
            messageType: `recipient_${kind}`,
            text,
            url: contact.url,
            data: { kind, language },
          });
        }
      }
    }
    if (t.customer_user_id) await pushTo(tx, organizationId, t.customer_user_id, tripId, kind, s, t, etaAt);
  }

  /** A customer with an account is told in the app (inbox and push), following his phone's preference: nothing once he opted out, in his language. */
  async function pushTo(
    tx: Tx,
    organizationId: string,
    userId: string,
    subjectId: string,
    kind: MessageKind,
    s: MessageSettingsRow,
    t: { merchant_id: string | null },
    etaAt: Date | null,
  ) {
    const phone = await ctx.deps.identity.userPhone(tx, userId);
    const pref = phone ? await repo.findPreference(tx, phone) : null;
    if (pref?.optedOutAt) return;
    const language = ((pref?.language ?? s.defaultLanguage) as Language) ?? 'es';
    if (!(await repo.claimMessage(tx, { organizationId, id: newId(), subjectId, kind, channel: 'push', language, destination: userId })))
      return;
    const values = await valuesOf(tx, t, { name: null, url: null, etaAt });
    await notifications.notifyIn(tx, organizationId, {
      type: `recipient.${kind}`,
      title: values.merchant_name,
      body: render(templateOf(s, kind, language), values),
      data: { kind, language, subject_id: subjectId },
      entityType: 'trip',
      entityId: subjectId,
      userIds: [userId],
    });
  }

  return {
    /** Recorded events (composition root): trip assigned, delivered, failed; a customer's order confirmed. */
    async onEvent(tx: Tx, ev: StoredEvent): Promise<void> {
      if (ev.entity_type === 'trip') {
        const kind = EVENT_KINDS[ev.type];
        if (kind) await tellTrip(tx, ev.organization_id, ev.entity_id, kind);
      } else if (ev.type === 'order.status_changed' && ev.payload.status === 'confirmed' && ev.audience_user_ids[0]) {
        // A customer's order (he has an account: the customer is the first of the event's audience): push only.
        const s = await load(tx, ev.organization_id);
        await pushTo(tx, ev.organization_id, ev.audience_user_ids[0], ev.entity_id, 'order_confirmed', s, { merchant_id: null }, null);
      }
    },

    /** A recipient link was issued (logistics hook): the first one carries the order confirmation with the link. */
    async linkIssued(tx: Tx, issued: { organizationId: string; tripId: string; reissued: boolean }): Promise<void> {
      if (!issued.reissued) await tellTrip(tx, issued.organizationId, issued.tripId, 'order_confirmed');
    },

    /** A trip's ETA was recomputed (logistics hook): "arriving soon" once it is within the setting, throttled per trip. */
    async etaUpdated(tx: Tx, u: { tripId: string; organizationId: string; etaDropoffAt: Date | null }): Promise<void> {
      if (!u.etaDropoffAt) return;
      const s = await load(tx, u.organizationId);
      const left = u.etaDropoffAt.getTime() - Date.now();
      if (left <= s.arrivingSoonMin * 60_000) await tellTrip(tx, u.organizationId, u.tripId, 'arriving_soon', u.etaDropoffAt);
    },

    getSettings: (actor: Actor) => ctx.db.withTenant(actor, async (tx) => settingsOut(await read(tx, actor.organizationId))),

    /** Administrators: minutes, default language and templates; an unknown placeholder is a 400 and nothing is written. */
    updateSettings: (actor: Actor, patch: SettingsPatch) => {
      assertKnownPlaceholders(patch.templates ?? []);
      return ctx.db.withTenant(actor, async (tx) => {
        const before = (await repo.findSettings(tx, actor.organizationId, true)) ?? defaults(actor.organizationId);
        const templates = structuredClone(before.templates as Overrides);
        for (const t of patch.templates ?? []) {
          const forKind = (templates[t.kind] ??= {});
          if (t.body === null || t.body === DEFAULT_TEMPLATES[t.kind][t.language]) delete forKind[t.language];
          else forKind[t.language] = t.body;
          if (Object.keys(forKind).length === 0) delete templates[t.kind];
        }
        const after = await repo.upsertSettings(tx, {
          organizationId: actor.organizationId,
          arrivingSoonMin: patch.arriving_soon_min ?? before.arrivingSoonMin,
          etaMessagePeriodMin: patch.eta_message_period_min ?? before.etaMessagePeriodMin,
          defaultLanguage: patch.default_language ?? before.defaultLanguage,
          templates,
        });
        await settingsCache.changed(tx, actor.organizationId);
        await recordAudit(tx, actor, {
          action: 'recipient_messages.settings_updated',
          entityType: 'organization',
          entityId: actor.organizationId,
          before: settingsOut(before),
          after: settingsOut(after),
        });
        return settingsOut(after);
      });
    },

    /** A template (the stored one, or `body` as typed and not saved) rendered with sample values. */
    preview: (actor: Actor, q: { kind: MessageKind; language: Language; body?: string }) => {
      if (q.body !== undefined) {
        const unknown = unknownPlaceholders(q.body);
        if (unknown.length)
          throw AppError.badRequest(
            `Unknown placeholder ${unknown.map((n) => `{${n}}`).join(', ')}`,
            [
              {
                field: 'body',
                message: `unknown placeholder ${unknown.map((n) => `{${n}}`).join(', ')}; known: ${PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}`,
              },
            ],
            'UNKNOWN_PLACEHOLDER',
          );
      }
      return ctx.db.withTenant(actor, async (tx) => {
        const s = await read(tx, actor.organizationId);
        const org = (await organizations.branding(tx)) as { name: string } | undefined;
        const { timezone } = await organizations.settingsIn(tx);
        const eta = new Date(Date.now() + s.arrivingSoonMin * 60_000);
        const sample: MessageValues = {
          recipient_name: q.language === 'es' ? 'Ana' : 'Ann',
          merchant_name: q.language === 'es' ? 'Tienda Ejemplo' : 'Sample Store',
          organization_name: org?.name ?? '',
          eta_time: clockTime(eta, timezone),
          eta_minutes: String(s.arrivingSoonMin),
          tracking_link: `${ctx.config.publicBaseUrl}/api/v1/public/tracking/…`,
        };
        return { kind: q.kind, language: q.language, text: render(q.body ?? templateOf(s, q.kind, q.language), sample) };
      });
    },

    listPreferences: (actor: Actor, q: { opted_out?: boolean; limit?: number; cursor?: string }) => {
      const page = pageRequest(q);
      return ctx.db.readTenant(actor, async (tx) =>
        toPage(
          await repo.listPreferences(tx, { optedOut: q.opted_out ?? null, after: page.after, limit: page.limit + 1 }),
          page,
          preferenceOut,
        ),
      );
    },

    /** Staff: opt a phone out (or back in) and set its language; audited. */
    setPreference: (actor: Actor, input: { phone: string; opted_out?: boolean; language?: Language | null }) =>
      ctx.db.withTenant(actor, async (tx) => {
        const { phone } = await normalizePhones(tx, actor.organizationId, { phone: input.phone }, ['phone']);
        const before = await repo.findPreference(tx, phone);
        const after = await repo.upsertPreference(tx, {
          organizationId: actor.organizationId,
          id: newId(),
          phone,
          language: input.language,
          optedOut: input.opted_out,
          changedBy: 'staff',
        });
        await recordAudit(tx, actor, {
          action: 'recipient_messages.preference_set',
          entityType: 'recipient_preference',
          entityId: after.id,
          before: before ? preferenceOut(before) : null,
          after: preferenceOut(after),
        });
        return preferenceOut(after);
      }),

    /** A customer with an account: the preference of his own phone (the messages about his orders follow it). */
    async ownCustomerPreference(actor: Actor, input?: { opted_out?: boolean; language?: Language | null }) {
      return ctx.db.withTenant(actor, async (tx) => {
        const phone = await ctx.deps.identity.userPhone(tx, actor.userId);
        if (!phone) {
          if (!input) return { phone: null, opted_out: false, language: null };
          throw AppError.unprocessable('Add a phone to your account to choose how you are told about your orders', 'NO_RECIPIENT_PHONE', [
            { field: 'phone', message: 'the account has no phone' },
          ]);
        }
        const p = input
          ? await repo.upsertPreference(tx, {
              organizationId: actor.organizationId,
              id: newId(),
              phone,
              language: input.language,
              optedOut: input.opted_out,
              changedBy: 'recipient',
            })
          : await repo.findPreference(tx, phone);
        return { phone, opted_out: !!p?.optedOutAt, language: (p?.language as Language | null) ?? null };
      });
    },

    /** The recipient, from his tracking link: stop (or resume) the messages to his phone, choose their language. Null: no such link. */
    async setOwnPreference(token: string, input: { opted_out?: boolean; language?: Language }) {
      const link = await logistics.resolveRecipientToken(token);
      if (!link) return null;
      if (!link.phone) throw AppError.unprocessable('This link has no phone to send messages to', 'NO_RECIPIENT_PHONE');
      const phone = link.phone;
      return ctx.db.withTenant({ organizationId: link.organizationId, userId: null }, async (tx) => {
        const p = await repo.upsertPreference(tx, {
          organizationId: link.organizationId,
          id: newId(),
          phone,
          language: input.language,
          optedOut: input.opted_out,
          changedBy: 'recipient',
        });
        return { opted_out: p.optedOutAt !== null, language: (p.language as Language | null) ?? null };
      });
    },
  };
}

export type MessagesService = ReturnType<typeof createMessagesService>;
