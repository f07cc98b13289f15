import { normalizePhones } from '../../../platform/phone.js';
import { AppError } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import type { Actor } from '../../../platform/auth.js';
import { recordAudit } from '../../../platform/audit.js';
import { pageRequest, toPage } from '../../../platform/pagination.js';
import type { AppContext } from '../../../platform/context.js';
import type { ChatContext } from '../context.js';
import type { Tx } from '../../../platform/db/index.js';
import { clickToChatLink } from './sender.js';
import * as repo from '../repo.js';
import { PATCHABLE, type ChatOutboxStatus, type PatchableKey } from '../repo.js';
import {
  chatTokenContext,
  defaultSettings,
  provisionedSecretRef,
  settingsOut,
  type ChannelSettingsRow,
  type ChatMode,
} from './settings.js';
import { encryptSecret, requireKeyring } from '../../../platform/secrets.js';
import { createAnnouncedCache } from '../../../platform/cache.js';

export type { ChatOutboxRow, ChatOutboxStatus } from '../repo.js';

/** What commerce passes when an order or an express request is created. */
export interface OrderMessageInput {
  organizationId: string;
  merchantId: string;
  orderId?: string | null;
  expressRequestId?: string | null;
  territoryId?: string | null;
  /** The message text (order number, items, total...), formatted by the caller. */
  summary: string;
  /** Structured details kept in the payload for clients. */
  data?: Record<string, unknown>;
  /** Recipient; defaults to the merchant's `chat_phone`. */
  destinationPhone?: string | null;
}

export interface StatusMessageInput extends Omit<OrderMessageInput, 'summary'> {
  status: string;
  summary?: string;
}

export interface ChannelSettingsPatch {
  chat_enabled?: boolean;
  chat_mode?: ChatMode;
  chat_phone?: string | null;
  chat_phone_number_id?: string | null;
  chat_account_id?: string | null;
  chat_secret_ref?: string | null;
  /** The channel token in plain text (write-only: stored encrypted); null clears it. */
  chat_token?: string | null;
  order_notifications?: boolean;
  status_notifications?: boolean;
}

/** What queueing a message reads of a merchant's channel settings (never the token). */
type ChannelRouting = Pick<
  ChannelSettingsRow,
  'chat_enabled' | 'chat_mode' | 'chat_phone' | 'order_notifications' | 'status_notifications'
>;

export function createChatService(ctx: AppContext, deps: ChatContext['deps']) {
  const { db } = ctx;
  // Per merchant (`organization:merchant`), read by every queued message; a settings update (the only way a merchant
  // comes to have settings) announces it. Wrapped, so that a merchant without settings (most) is kept too.
  const routingCache = createAnnouncedCache<{ routing: ChannelRouting | null }>(ctx, 'chat_settings_changed');
  const routingKey = (organizationId: string, merchantId: string) => `${organizationId}:${merchantId}`;

  /** The merchant of a `comercio` user, through the logistics service; 422 when the user has none. */
  async function resolveMerchantId(tx: Tx, actor: Actor): Promise<string> {
    const ref = await deps.merchantOfUser(tx, actor.userId);
    const id = typeof ref === 'string' ? ref : (ref?.id ?? null);
    if (!id) throw AppError.unprocessable('This user has no merchant profile', 'MERCHANT_PROFILE_REQUIRED');
    return id;
  }

  async function loadSettings(tx: Tx, organizationId: string, merchantId: string): Promise<ChannelSettingsRow | null> {
    return repo.findSettings(tx, organizationId, merchantId);
  }

  /** The channel settings a queued message follows: cached per merchant, loaded in the caller's transaction on a miss. */
  async function routingOf(tx: Tx, organizationId: string, merchantId: string): Promise<ChannelRouting | null> {
    const { routing } = await routingCache.get(routingKey(organizationId, merchantId), async () => {
      const s = await repo.findSettings(tx, organizationId, merchantId);
      return {
        routing: s && {
          chat_enabled: s.chat_enabled,
          chat_mode: s.chat_mode,
          chat_phone: s.chat_phone,
          order_notifications: s.order_notifications,
          status_notifications: s.status_notifications,
        },
      };
    });
    return routing;
  }

  async function insertMessage(
    tx: Tx,
    s: ChannelRouting,
    input: OrderMessageInput,
    messageType: string,
    extra: Record<string, unknown>,
  ): Promise<string | null> {
    if (!input.orderId && !input.expressRequestId && !extra.trip_id)
      throw new Error('a chat order message needs an orderId, an expressRequestId or a trip');
    const destination = input.destinationPhone ?? s.chat_phone;
    if (!destination) return null;
    const payload: Record<string, unknown> = { summary: input.summary, ...extra, ...(input.data ? { data: input.data } : {}) };
    if (s.chat_mode === 'link') payload.link = clickToChatLink(destination, input.summary);
    return repo.insertOutboxMessage(tx, {
      organization_id: input.organizationId,
      id: newId(),
      territory_id: input.territoryId ?? null,
      merchant_id: input.merchantId,
      order_id: input.orderId ?? null,
      express_request_id: input.expressRequestId ?? null,
      destination_phone: destination,
      message_type: messageType,
      payload,
    });
  }

  async function merchantOf(tx: Tx, merchantId: string) {
    const m = await deps.getMerchant(tx, merchantId);
    if (!m) throw AppError.notFound('Merchant');
    return m;
  }

  /** The audit's view of the settings: never the (encrypted) token; `credential` says whether one is stored. */
  const auditView = ({ chat_token, ...rest }: ChannelSettingsRow) => ({ ...rest, credential: chat_token !== null ? 'stored' : 'none' });

  async function update(tx: Tx, actor: Actor, merchantId: string, patch: ChannelSettingsPatch) {
    patch = await normalizePhones(tx, actor.organizationId, patch, ['chat_phone']);
    const before = await repo.findSettings(tx, actor.organizationId, merchantId, true);
    const merged = { ...defaultSettings(actor.organizationId, merchantId), ...before } as ChannelSettingsRow;
    const given: PatchableKey[] = PATCHABLE.filter(
      (k) => k !== 'chat_token' && k !== 'chat_token_set_at' && patch[k as keyof ChannelSettingsPatch] !== undefined,
    );
    for (const k of given) (merged as unknown as Record<string, unknown>)[k] = patch[k as keyof ChannelSettingsPatch];
    if (patch.chat_token !== undefined) {
      // Write-only: stored encrypted, bound to this merchant; null clears it.
      merged.chat_token =
        patch.chat_token === null
          ? null
          : encryptSecret(requireKeyring(ctx.config.secrets), patch.chat_token, chatTokenContext(actor.organizationId, merchantId));
      merged.chat_token_set_at = patch.chat_token === null ? null : new Date();
      given.push('chat_token', 'chat_token_set_at');
    }
    if (merged.chat_enabled && !merged.chat_phone) {
      throw AppError.unprocessable('Enabling the chat channel needs a chat_phone', 'CHAT_PHONE_REQUIRED', [
        { field: 'chat_phone', message: 'required while chat_enabled is true' },
      ]);
    }
    if (patch.chat_secret_ref && patch.chat_secret_ref !== provisionedSecretRef(actor.organizationId, merchantId)) {
      throw AppError.unprocessable(
        'chat_secret_ref must name the secret provisioned for this merchant: env:CHAT_SECRET_<ORGANIZATION_ID>_<MERCHANT_ID>',
        'SECRET_REF_NOT_PROVISIONED',
        [{ field: 'chat_secret_ref', message: 'not the secret provisioned for this merchant' }],
      );
    }
    // A concurrent first PATCH may insert between our read and write: the upsert then applies only our fields.
    const after = await repo.upsertSettings(tx, actor.organizationId, merchantId, merged, given);
    if (after.chat_enabled && !after.chat_phone)
      throw AppError.unprocessable('Enabling the chat channel needs a chat_phone', 'CHAT_PHONE_REQUIRED');
    await routingCache.changed(tx, routingKey(actor.organizationId, merchantId));
    await recordAudit(tx, actor, {
      action: 'merchant_channels.updated',
      entityType: 'merchant_channel_settings',
      entityId: merchantId,
      before: before ? auditView(before) : null,
      after: {
        ...auditView(after),
        ...(patch.chat_token !== undefined ? { credential: patch.chat_token === null ? 'cleared' : 'replaced' } : {}),
      },
    });
    return settingsOut(after, ctx.config);
  }

  return {
    resolveMerchantId,

    async getSettings(actor: Actor) {
      return db.withTenant(actor, async (tx) => {
        const merchantId = await resolveMerchantId(tx, actor);
        return settingsOut(
          (await loadSettings(tx, actor.organizationId, merchantId)) ?? defaultSettings(actor.organizationId, merchantId),
          ctx.config,
        );
      });
    },

    /** An administrator's view of a merchant's channel (another organization's merchant, or none: 404). */
    async getSettingsOf(actor: Actor, merchantId: string) {
      return db.withTenant(actor, async (tx) => {
        await merchantOf(tx, merchantId);
        return settingsOut(
          (await loadSettings(tx, actor.organizationId, merchantId)) ?? defaultSettings(actor.organizationId, merchantId),
          ctx.config,
        );
      });
    },

    /** Partial update (creates the row on first use). Enabling chat needs a `chat_phone` (422 `CHAT_PHONE_REQUIRED`). */
    async updateSettings(actor: Actor, patch: ChannelSettingsPatch) {
      return db.withTenant(actor, async (tx) => update(tx, actor, await resolveMerchantId(tx, actor), patch));
    },

    /** An administrator's update of a merchant's channel, as the merchant's own. */
    async updateSettingsOf(actor: Actor, merchantId: string, patch: ChannelSettingsPatch) {
      return db.withTenant(actor, async (tx) => {
        await merchantOf(tx, merchantId);
        return update(tx, actor, merchantId, patch);
      });
    },

    async listOutbox(
      actor: Actor,
      q: { status?: ChatOutboxStatus; order_id?: string; express_request_id?: string; limit?: number; cursor?: string },
    ) {
      const page = pageRequest(q);
      return db.withTenant(actor, async (tx) => {
        const merchantId = await resolveMerchantId(tx, actor);
        const rows = await repo.listOutbox(tx, merchantId, {
          status: q.status ?? null,
          orderId: q.order_id ?? null,
          expressRequestId: q.express_request_id ?? null,
          after: page.after,
          limit: page.limit + 1,
        });
        return toPage(rows, page);
      });
    },

    /**
     * In the caller's transaction: queues an `order_created` message when the merchant has `chat_enabled` and
     * `order_notifications`. At most one per order and per express request. Returns the row id, or null when
     * nothing was queued (channel off, no destination phone, already queued).
     */
    async enqueueOrderCreated(tx: Tx, input: OrderMessageInput): Promise<string | null> {
      const s = await routingOf(tx, input.organizationId, input.merchantId);
      if (!s?.chat_enabled || !s.order_notifications) return null;
      return insertMessage(tx, s, input, 'order_created', {});
    },

    /**
     * In the caller's transaction: queues a message to a trip's recipient (recipient messages: `recipient_<kind>`,
     * the text already rendered in his language, with his tracking link) through the merchant's channel when it is
     * on. Null otherwise (channel off: nothing is queued).
     */
    async enqueueRecipientMessage(
      tx: Tx,
      input: Omit<OrderMessageInput, 'summary'> & {
        tripId: string;
        destinationPhone: string;
        messageType: string;
        text: string;
        url: string | null;
      },
    ): Promise<string | null> {
      const s = await routingOf(tx, input.organizationId, input.merchantId);
      if (!s?.chat_enabled) return null;
      return insertMessage(tx, s, { ...input, summary: input.text }, input.messageType, { trip_id: input.tripId, url: input.url });
    },

    /** In the caller's transaction: queues an `order_status_changed` message when the merchant has `status_notifications`. */
    async enqueueStatusChanged(tx: Tx, input: StatusMessageInput): Promise<string | null> {
      const s = await routingOf(tx, input.organizationId, input.merchantId);
      if (!s?.chat_enabled || !s.status_notifications) return null;
      const ref = input.orderId ? `Order ${input.orderId}` : `Express request ${input.expressRequestId}`;
      return insertMessage(tx, s, { ...input, summary: input.summary ?? `${ref}: ${input.status}` }, 'order_status_changed', {
        status: input.status,
      });
    },

    /**
     * In the caller's transaction (the order's cancellation): every message of the order not sent yet becomes
     * `cancelled`: `pending` rows, and `sending` rows whose claim expired (their worker died). Returns how many.
     */
    async cancelPendingForOrder(tx: Tx, orderId: string): Promise<number> {
      return repo.cancelUnsent(tx, 'order_id', orderId);
    },

    async cancelPendingForExpressRequest(tx: Tx, expressRequestId: string): Promise<number> {
      return repo.cancelUnsent(tx, 'express_request_id', expressRequestId);
    },
  };
}

export type ChatService = ReturnType<typeof createChatService>;
