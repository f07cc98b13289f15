import { createHmac } from 'node:crypto';
import type { Settings } from '../../../config.js';

/** One push to one device, as the worker hands it to a gateway. */
export interface PushMessage {
  id: string;
  organization_id: string;
  platform: string;
  push_token: string;
  payload: Record<string, unknown>;
  attempt: number;
}

/** `permanent` failures (a rejected token, a malformed message) are not retried. */
export type PushResult = { ok: true } | { ok: false; permanent: boolean; error: string };

/** Physical push delivery; the worker is the only caller. */
export interface PushGateway {
  readonly name: string;
  send(message: PushMessage): Promise<PushResult>;
}

export const SIGNATURE_HEADER = 'x-push-signature';
export const TIMESTAMP_HEADER = 'x-push-timestamp';

/** `sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">`, so a receiver can reject replays and forgeries. */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * Generic webhook gateway: POSTs one JSON message per device to a relay (FCM/APNs sender, SMS bridge...).
 * 2xx = delivered; 408, 429 and 5xx and network errors are retried; any other 4xx is permanent.
 * The outbox id travels as `x-push-id`: delivery is at least once, the receiver de-duplicates on it.
 */
export function createWebhookGateway(opts: { url: string; secret: string; timeoutMs?: number }): PushGateway {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  return {
    name: 'webhook',
    async send(m) {
      const body = JSON.stringify({
        id: m.id,
        organization_id: m.organization_id,
        attempt: m.attempt,
        to: { platform: m.platform, token: m.push_token },
        notification: m.payload,
      });
      const timestamp = Math.floor(Date.now() / 1000);
      try {
        const res = await fetch(opts.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-push-id': m.id,
            [TIMESTAMP_HEADER]: String(timestamp),
            [SIGNATURE_HEADER]: signWebhook(opts.secret, timestamp, body),
          },
          body,
          signal: AbortSignal.timeout(timeoutMs),
        });
        await res.arrayBuffer().catch(() => undefined);
        if (res.ok) return { ok: true };
        const retryable = res.status === 408 || res.status === 429 || res.status >= 500;
        return { ok: false, permanent: !retryable, error: `HTTP_${res.status}` };
      } catch (err) {
        return { ok: false, permanent: false, error: `NETWORK: ${(err as Error).message}`.slice(0, 300) };
      }
    },
  };
}

/** The configured gateway, or null (rows then wait as `pending` with `last_error = 'NO_GATEWAY'`). */
export function gatewayFromConfig(raw: Settings): PushGateway | null {
  const url = raw.PUSH_WEBHOOK_URL;
  if (!url) return null;
  const secret = raw.PUSH_WEBHOOK_SECRET;
  if (!secret || secret.length < 16)
    throw new Error('config: PUSH_WEBHOOK_SECRET (at least 16 characters) is required with PUSH_WEBHOOK_URL');
  return createWebhookGateway({ url, secret, timeoutMs: raw.PUSH_WEBHOOK_TIMEOUT_MS });
}
