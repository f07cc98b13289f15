import { createHmac } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Worker } from '../../platform/context.js';
import type { WebhooksContext } from './context.js';
import { systemActor } from '../../platform/auth.js';
import { recordAudit } from '../../platform/audit.js';
import { newId } from '../../platform/ids.js';
import { SIGNATURE_HEADER, signPayload } from '../../platform/signature.js';
import * as repo from './repo.js';
import type { AttemptOutcome } from './tables.js';
import { httpSender, targetPolicy, type SendResult, type WebhookSender } from './service/sender.js';
import { decryptSecret, SecretError, type SecretsKeyring } from '../../platform/secrets.js';
import { secretContextOf, type SubscriptionCache } from './service/webhooks.js';

export const TIMESTAMP_HEADER = 'x-webhook-timestamp';
export const EVENT_ID_HEADER = 'x-webhook-event-id';

export interface WebhookWorkerOptions {
  sender: WebhookSender;
  /** The worker's clock (retries, claim expiry, the failure streak, signature timestamps); tests move it. */
  now: () => Date;
  random: () => number;
  /** Sends in flight at once, over all subscriptions. */
  concurrency: number;
  /** Sends in flight at once to one subscription. */
  perSubscription: number;
  timeoutMs: number;
  /** A `sending` row whose claim is older than this is claimed again (its worker is presumed dead); > timeoutMs. */
  claimTimeoutMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** No new attempt is scheduled past this age of a delivery: it fails. */
  retryWindowMs: number;
  /** A subscription whose attempts have all failed for this long is disabled and its owner notified. */
  disableAfterMs: number;
  intervalMs: number;
  /** Told of every attempt whose outcome was written: its verdict, the HTTP exchange's and (when delivered) the event's age in ms. */
  onAttempt?: (a: { outcome: AttemptOutcome; durationMs: number; deliveredAfterMs: number | null }) => void;
}

/** Settings from the environment (WEBHOOK_*, listed in the module's index.ts and in the README). */
export function webhookWorkerOptions(ctx: WebhooksContext, overrides: Partial<WebhookWorkerOptions> = {}): WebhookWorkerOptions {
  const s = ctx.config.settings;
  const timeoutMs = s.WEBHOOK_TIMEOUT_MS;
  const claimTimeoutMs = s.WEBHOOK_CLAIM_TIMEOUT_MS;
  if (claimTimeoutMs <= timeoutMs) throw new Error('config: WEBHOOK_CLAIM_TIMEOUT_MS must exceed WEBHOOK_TIMEOUT_MS');
  return {
    sender: httpSender,
    now: () => new Date(),
    random: Math.random,
    concurrency: s.WEBHOOK_CONCURRENCY,
    perSubscription: s.WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY,
    timeoutMs,
    claimTimeoutMs,
    retryBaseMs: s.WEBHOOK_RETRY_BASE_MS,
    retryMaxMs: s.WEBHOOK_RETRY_MAX_MS,
    retryWindowMs: s.WEBHOOK_RETRY_WINDOW_MS,
    disableAfterMs: s.WEBHOOK_DISABLE_AFTER_MS,
    intervalMs: s.WEBHOOK_WORKER_INTERVAL_MS,
    ...overrides,
  };
}

/** Exponential back-off after the n-th failed attempt, capped, with jitter: a uniform draw in [50%, 100%] of the step. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number, random = Math.random): number {
  const step = Math.min(baseMs * 2 ** Math.max(attempt - 1, 0), maxMs);
  return Math.round(step / 2 + (random() * step) / 2);
}

/** `Retry-After` as seconds or an HTTP date, in milliseconds from now; null when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now: Date): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return null;
  if (/^\d{1,10}$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}

/** What to do after an attempt: 2xx delivered; network errors, timeouts, 408, 429 and 5xx retried; anything else final. */
export function classify(r: SendResult): AttemptOutcome {
  if (r.refused) return 'failed';
  if (r.statusCode === null) return 'retry';
  if (r.statusCode >= 200 && r.statusCode < 300) return 'delivered';
  if (r.statusCode === 408 || r.statusCode === 429 || r.statusCode >= 500) return 'retry';
  return 'failed';
}

/** `t=<unix seconds>,v1=<hmac>` (the inbound connector scheme), plus a second `v1` with the previous secret during a rotation's overlap. */
export function signatureHeader(
  d: Pick<repo.ClaimedDelivery, 'secret' | 'previous_secret' | 'previous_secret_expires_at'>,
  body: string,
  timestamp: number,
  now: Date,
): string {
  let header = signPayload(d.secret, body, timestamp);
  if (d.previous_secret && d.previous_secret_expires_at && new Date(d.previous_secret_expires_at) > now) {
    header += `,v1=${createHmac('sha256', d.previous_secret).update(`${timestamp}.`).update(body).digest('hex')}`;
  }
  return header;
}

/** The claimed delivery's secrets in plain text (they are stored encrypted); throws `SecretError` when they cannot be read. */
export function openSecrets(ring: SecretsKeyring | null, d: repo.ClaimedDelivery): repo.ClaimedDelivery {
  if (!ring) throw new SecretError('UNKNOWN_KEY_VERSION', 'the server has no SECRETS_KEY');
  const context = secretContextOf(d.organization_id, d.subscription_id);
  return {
    ...d,
    secret: decryptSecret(ring, d.secret, context),
    previous_secret: d.previous_secret ? decryptSecret(ring, d.previous_secret, context) : null,
  };
}

export interface WebhookWorker extends Worker {
  /** Waits for every send in flight (tests, shutdown). */
  idle(): Promise<void>;
  /** One tick, then waits for its sends: what a test calls. Returns the deliveries claimed. */
  runOnce(): Promise<number>;
}

/**
 * The webhook outbox dispatcher. Claims due deliveries in a short system transaction (SKIP LOCKED, claim token
 * and expiry), POSTs them outside any transaction with a bounded number in flight, then records each outcome
 * (a delivery in one statement of its own, a failure in a tenant transaction with what it may bring) only if the
 * claim is still ours: an attempt is counted and logged exactly once even with several instances, and a late
 * worker whose claim expired writes nothing.
 */
export function createWebhookWorker(
  ctx: WebhooksContext,
  subscriptions: Pick<SubscriptionCache, 'changed'>,
  opts: WebhookWorkerOptions,
): WebhookWorker {
  const { db } = ctx;
  const inFlight = new Set<Promise<void>>();

  async function record(d: repo.ClaimedDelivery, r: SendResult, startedAt: Date, durationMs: number) {
    const now = opts.now();
    const verdict = classify(r);
    let outcome: repo.Outcome;
    const error = r.error ?? (verdict === 'delivered' ? null : `HTTP ${r.statusCode}`);
    if (verdict === 'retry') {
      const hinted = r.statusCode === 429 || r.statusCode === 503 ? retryAfterMs(r.headers['retry-after'], now) : null;
      const delay =
        hinted !== null ? Math.min(hinted, opts.retryMaxMs) : backoffMs(d.attempts, opts.retryBaseMs, opts.retryMaxMs, opts.random);
      // The last attempt is made at the end of the retry window; a failure then is final.
      const deadline = new Date(d.created_at).getTime() + opts.retryWindowMs;
      outcome =
        now.getTime() >= deadline
          ? { status: 'failed', nextAttemptAt: null, statusCode: r.statusCode, error: `gave up after ${d.attempts} attempts: ${error}` }
          : { status: 'pending', nextAttemptAt: new Date(Math.min(now.getTime() + delay, deadline)), statusCode: r.statusCode, error };
    } else {
      outcome = { status: verdict === 'delivered' ? 'delivered' : 'failed', nextAttemptAt: null, statusCode: r.statusCode, error };
    }
    const log: repo.AttemptLog = {
      id: newId(),
      attempt: d.attempts,
      url: d.url,
      startedAt,
      durationMs: Math.round(durationMs),
      statusCode: r.statusCode,
      error: outcome.error,
      responseExcerpt: r.excerpt,
      outcome: verdict === 'retry' && outcome.status === 'failed' ? 'failed' : verdict,
    };
    const noted = () =>
      opts.onAttempt?.({
        outcome: log.outcome,
        durationMs,
        deliveredAfterMs: verdict === 'delivered' ? Math.max(0, now.getTime() - new Date(d.created_at).getTime()) : null,
      });
    const tenant = { organizationId: d.organization_id, userId: null };
    if (verdict === 'delivered') {
      // Most attempts: the outcome is the only write, one statement committed on its own (no BEGIN, no COMMIT).
      if ((await db.tenantWrite(tenant, ...repo.finishAttemptStatement(d, outcome, log, now))).length > 0) noted();
      return;
    }
    await db.withTenant(tenant, async (tx) => {
      if (!(await repo.finishAttempt(tx, d, outcome, log, now))) return;
      noted();
      const exhausted = verdict === 'retry' && outcome.status === 'failed' ? d.id : null;
      const disabled = await repo.markSubscriptionFailing(tx, d.subscription_id, now, opts.disableAfterMs, exhausted);
      if (!disabled) return;
      await subscriptions.changed(tx, d.organization_id);
      await repo.cancelPending(tx, disabled.id, 'SUBSCRIPTION_DISABLED');
      await recordAudit(tx, systemActor(d.organization_id, 'webhooks'), {
        action: 'webhook_subscription.disabled',
        entityType: 'webhook_subscription',
        entityId: disabled.id,
        before: { active: true },
        after: { active: false, reason: 'failing', failing_since: disabled.failingSince },
      });
      await ctx.deps.notifications.notifyIn(tx, d.organization_id, {
        type: 'webhook.subscription_disabled',
        title: 'Webhook disabled',
        body: `The webhook to ${disabled.url} failed for a day and was disabled; enable it again once the receiver works.`,
        entityType: 'webhook_subscription',
        entityId: disabled.id,
        userIds: [disabled.ownerUserId],
        data: { subscription_id: disabled.id, url: disabled.url, last_error: outcome.error },
      });
    });
  }

  async function deliver(d: repo.ClaimedDelivery) {
    const now = opts.now();
    const body = JSON.stringify(d.body);
    const timestamp = Math.floor(now.getTime() / 1000);
    const t0 = performance.now();
    let result: SendResult;
    try {
      const signed = openSecrets(ctx.config.secrets, d);
      result = await opts.sender({
        url: d.url,
        body,
        timeoutMs: opts.timeoutMs,
        policy: targetPolicy(ctx.config),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'delivery-webhooks/1',
          'x-webhook-id': d.id,
          [EVENT_ID_HEADER]: d.event_id,
          'x-webhook-event-type': d.event_type,
          [TIMESTAMP_HEADER]: String(timestamp),
          [SIGNATURE_HEADER]: signatureHeader(signed, body, timestamp, now),
        },
      });
    } catch (err) {
      // A secret that cannot be read (a key version not configured) is retried like a network error: the operator can fix it.
      const message = err instanceof SecretError ? `the signing secret cannot be read: ${err.message}` : (err as Error).message;
      result = { statusCode: null, headers: {}, excerpt: null, error: message.slice(0, 500), refused: false };
    }
    await record(d, result, now, performance.now() - t0);
  }

  /** Sends finished since the worker began, and who waits for that count to grow. */
  let settled = 0;
  const onSettled = new Set<() => void>();

  function start(d: repo.ClaimedDelivery) {
    // A delivery whose outcome cannot be written stays `sending` and is claimed again when its claim expires.
    const p: Promise<void> = deliver(d)
      .catch(() => undefined)
      .finally(() => {
        inFlight.delete(p);
        settled++;
        for (const f of onSettled) f();
      });
    inFlight.add(p);
  }

  /** True once `n` more sends have finished, false after `ms` without that. */
  function sendsFinish(n: number, ms: number): Promise<boolean> {
    const target = settled + n;
    return new Promise((resolve) => {
      const check = () => {
        if (settled < target) return;
        clearTimeout(timer);
        onSettled.delete(check);
        resolve(true);
      };
      const timer = setTimeout(() => {
        onSettled.delete(check);
        resolve(false);
      }, ms);
      timer.unref?.();
      onSettled.add(check);
    });
  }

  const claim = (limit: number) =>
    db.withSystem((tx) =>
      repo.claimDue(tx, { now: opts.now(), limit, perSubscription: opts.perSubscription, claimMs: opts.claimTimeoutMs, token: newId() }),
    );

  async function tick(): Promise<number> {
    // Claim in batches: wait for a quarter of the slots to be free rather than claiming one row per round trip.
    while (inFlight.size > 0 && opts.concurrency - inFlight.size < Math.ceil(opts.concurrency / 4)) await Promise.race(inFlight);
    let claimed = await claim(opts.concurrency - inFlight.size);
    // Nothing claimable while sends are in flight: the due rows may all belong to subscriptions at their
    // per-subscription limit. Claim again as soon as a few of those sends finish (a quarter of the limit, one
    // claim statement for several rows) instead of pausing the whole interval; a slow receiver that finishes
    // nothing within the interval leaves the pause to the worker loop as before.
    while (claimed.length === 0 && inFlight.size > 0) {
      const batch = Math.min(inFlight.size, Math.ceil(opts.perSubscription / 4));
      if (!(await sendsFinish(batch, opts.intervalMs))) break;
      claimed = await claim(opts.concurrency - inFlight.size);
    }
    claimed.forEach(start);
    return claimed.length;
  }

  async function idle() {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  }

  return {
    name: 'webhooks',
    intervalMs: opts.intervalMs,
    tick,
    idle,
    async runOnce() {
      const n = await tick();
      await idle();
      return n;
    },
  };
}

export interface PrunerOptions {
  now: () => Date;
  retentionMs: number;
  intervalMs: number;
  /** Rows deleted per statement (one short transaction each). */
  batch: number;
  /** Statements per round at most: a large backlog is worked off over several rounds. */
  maxBatches: number;
}

/**
 * The retention pruner: deletes finished deliveries (and their attempt logs) older than the retention, in short
 * batches. Safe with several instances: each batch locks its rows with SKIP LOCKED, so two pruners take different
 * rows, and a delivery still pending or sending is never a candidate.
 */
export function createWebhookPruner(ctx: WebhooksContext, opts: PrunerOptions): Worker & { runOnce(): Promise<number> } {
  async function tick(): Promise<number> {
    const before = new Date(opts.now().getTime() - opts.retentionMs);
    let total = 0;
    for (let i = 0; i < opts.maxBatches; i++) {
      const n = await ctx.db.withSystem((tx) => repo.pruneFinished(tx, before, opts.batch));
      total += n;
      if (n < opts.batch) break;
    }
    return total;
  }
  return { name: 'webhooks-pruner', intervalMs: opts.intervalMs, tick, runOnce: tick };
}

export function prunerOptions(ctx: WebhooksContext, overrides: Partial<PrunerOptions> = {}): PrunerOptions {
  const s = ctx.config.settings;
  return {
    now: () => new Date(),
    retentionMs: s.WEBHOOK_DELIVERY_RETENTION_DAYS * 86_400_000,
    intervalMs: s.WEBHOOK_PRUNE_INTERVAL_MS,
    batch: 1_000,
    maxBatches: 20,
    ...overrides,
  };
}
