import type { AppContext, Worker } from '../../platform/context.js';
import { newId } from '../../platform/ids.js';
import { ChatSendError, clickToChatLink, createHttpChatSender, type ChatSender } from './service/sender.js';
import { channelToken, cloudApiIssues, type ChannelSettingsRow } from './service/settings.js';
import { claimDue, recordDelivery, settingsOf } from './repo.js';

export interface ClaimedMessage {
  organization_id: string;
  id: string;
  merchant_id: string;
  destination_phone: string;
  message_type: string;
  payload: Record<string, unknown>;
  attempts: number;
  claim_token: string;
  settings: ChannelSettingsRow | null;
}

export interface ChatOutboxOptions {
  sender: ChatSender;
  batchSize: number;
  /** How long a claim holds; a `sending` row older than this is claimed again (its worker is presumed dead). */
  claimTimeoutMs: number;
  sendTimeoutMs: number;
  maxAttempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** When delivery is not configured, how long a row waits (still `pending`) before it is looked at again. */
  unconfiguredRetryMs: number;
}

export interface ChatOutboxWorker extends Worker {
  /** Claims up to `limit` due rows (`pending`, or `sending` with an expired claim) and marks them `sending`. */
  claim(limit?: number): Promise<ClaimedMessage[]>;
  /** Delivers one claimed row and records the outcome (only while the claim is still ours). */
  deliver(message: ClaimedMessage): Promise<void>;
}

/** Settings from the environment: CHAT_OUTBOX_* and CHAT_SEND_TIMEOUT_MS (documented in the chat module). */
export function chatOutboxOptions(ctx: AppContext, sender?: ChatSender): ChatOutboxOptions {
  const s = ctx.config.settings;
  const sendTimeoutMs = s.CHAT_SEND_TIMEOUT_MS;
  const claimTimeoutMs = s.CHAT_OUTBOX_CLAIM_TIMEOUT_MS;
  if (claimTimeoutMs <= sendTimeoutMs) throw new Error('config: CHAT_OUTBOX_CLAIM_TIMEOUT_MS must exceed CHAT_SEND_TIMEOUT_MS');
  return {
    sender: sender ?? createHttpChatSender({ timeoutMs: sendTimeoutMs }),
    batchSize: s.CHAT_OUTBOX_BATCH_SIZE,
    claimTimeoutMs,
    sendTimeoutMs,
    maxAttempts: s.CHAT_OUTBOX_MAX_ATTEMPTS,
    retryBaseMs: s.CHAT_OUTBOX_RETRY_BASE_MS,
    retryMaxMs: s.CHAT_OUTBOX_RETRY_MAX_MS,
    unconfiguredRetryMs: s.CHAT_OUTBOX_UNCONFIGURED_RETRY_MS,
  };
}

/** Exponential backoff after the n-th failed attempt, capped, with up to 10% jitter. */
export function retryDelayMs(attempts: number, baseMs: number, maxMs: number): number {
  const delay = Math.min(baseMs * 2 ** Math.max(attempts - 1, 0), maxMs);
  return Math.round(delay * (1 + Math.random() * 0.1));
}

type Outcome =
  | { kind: 'sent'; payloadPatch: Record<string, unknown> }
  | { kind: 'retry'; error: string; delayMs: number }
  | { kind: 'failed'; error: string }
  | { kind: 'cancelled'; error: string }
  /** Not attempted: delivery is not configured. Back to `pending`, the attempt is not counted. */
  | { kind: 'unconfigured'; error: string; delayMs: number };

/**
 * The chat outbox dispatcher: pending -> sending (claim) -> sent | failed, or back to pending with a later
 * available_at. Rows are claimed with FOR UPDATE SKIP LOCKED (several workers never take the same row), and
 * sent outside any transaction; the outcome is written only if the claim token still matches.
 */
export function createChatOutboxWorker(ctx: AppContext, opts: ChatOutboxOptions): ChatOutboxWorker {
  const { db } = ctx;

  async function claim(limit = opts.batchSize): Promise<ClaimedMessage[]> {
    return db.withSystem(async (tx) => {
      const token = newId();
      const rows = await claimDue(tx, limit, token, opts.claimTimeoutMs);
      if (rows.length === 0) return [];
      const settings = await settingsOf(tx, rows);
      return rows.map((r) => ({ ...r, settings: settings.get(`${r.organization_id}/${r.merchant_id}`) ?? null }));
    });
  }

  async function outcomeOf(m: ClaimedMessage): Promise<Outcome> {
    const s = m.settings;
    // A row claimed again and again without an outcome (its worker keeps dying on it) is given up.
    if (m.attempts > opts.maxAttempts) return { kind: 'failed', error: `gave up after ${opts.maxAttempts} attempts without an outcome` };
    if (!s?.chat_enabled) return { kind: 'cancelled', error: 'the chat channel was disabled before the message was sent' };
    const text = typeof m.payload.summary === 'string' ? m.payload.summary : '';
    if (s.chat_mode === 'link') {
      // Nothing to transmit: the click-to-chat link is the delivery.
      return { kind: 'sent', payloadPatch: { link: clickToChatLink(m.destination_phone, text), channel: 'link' } };
    }
    const issues = cloudApiIssues(s, ctx.config, true);
    if (issues.length > 0)
      return {
        kind: 'unconfigured',
        error: `cloud_api delivery is not configured: ${issues.join('; ')}`,
        delayMs: opts.unconfiguredRetryMs,
      };
    try {
      const res = await opts.sender.send({
        baseUrl: ctx.config.settings.CHAT_CLOUD_API_URL!,
        token: channelToken(s, ctx.config).value!,
        phoneNumberId: s.chat_phone_number_id!,
        to: m.destination_phone.replace(/\D/g, ''),
        text,
      });
      return { kind: 'sent', payloadPatch: { channel: 'cloud_api', provider_message_id: res.providerMessageId } };
    } catch (err) {
      const error = err instanceof Error ? err.message.slice(0, 1000) : 'send failed';
      const retryable = !(err instanceof ChatSendError) || err.retryable;
      if (!retryable || m.attempts >= opts.maxAttempts) return { kind: 'failed', error };
      return { kind: 'retry', error, delayMs: retryDelayMs(m.attempts, opts.retryBaseMs, opts.retryMaxMs) };
    }
  }

  async function deliver(m: ClaimedMessage): Promise<void> {
    const o = await outcomeOf(m);
    await db.withTenant({ organizationId: m.organization_id, userId: null }, (tx) => recordDelivery(tx, m, o));
  }

  return {
    name: 'chat-outbox',
    intervalMs: 2_000,
    claim,
    deliver,
    async tick() {
      const claimed = await claim();
      // A row whose delivery throws stays `sending` and is claimed again when its claim expires.
      await Promise.allSettled(claimed.map(deliver));
      return claimed.length;
    },
  };
}
