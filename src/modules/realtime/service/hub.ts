import type { StoredEvent } from '../../../platform/events.js';

/** A live listener of one organization's events (an SSE connection). */
export interface Subscriber {
  organizationId: string;
  offer(ev: StoredEvent, frame: string): void;
}

export interface HubSource {
  /** Rows of the given sequences of one organization (committed: each was announced by NOTIFY at commit). */
  fetch(organizationId: string, seqs: number[]): Promise<StoredEvent[]>;
  /** The highest committed sequence, read once at start. */
  maxSeq(): Promise<number>;
  /**
   * Committed events of every organization with a sequence above `after` or among `also`, in sequence
   * order, at most `limit`: the durable log the hub catches up from after its listener was lost.
   */
  since(after: number, also: number[], limit: number): Promise<StoredEvent[]>;
}

export interface HubStatus {
  /** live: notifications flow; catching_up: reading the log after a lost listener; paused: the listener is lost. */
  state: 'starting' | 'live' | 'paused' | 'catching_up';
  watermark: number;
  connections: number;
  /** Listener losses the hub recovered from, and the events it delivered from the log while recovering. */
  recoveries: number;
  recovered_events: number;
  last_recovery_at: string | null;
}

export interface HubOptions {
  /**
   * How long a missing sequence holds back later ones. Sequences are allocated at insert but become
   * visible at commit, so seq 11 can commit before seq 10; releasing 11 first would let a client
   * resume from 11 and never see 10. A sequence that never shows up was rolled back (or its NOTIFY
   * lost): after this delay it is skipped, and if it does arrive later it is still delivered.
   */
  gapTimeoutMs: number;
  /** Rows per query while catching up from the log. */
  catchUpPage?: number;
}

/** Gap-skipped sequences remembered for a late delivery (a few MB at most). */
const MAX_SKIPPED = 100_000;

/** One SSE frame per event, built once and shared by every connection. */
export function sseFrame(ev: StoredEvent): string {
  const data = {
    seq: ev.seq,
    id: ev.id,
    type: ev.type,
    organization_id: ev.organization_id,
    entity_type: ev.entity_type,
    entity_id: ev.entity_id,
    territory_id: ev.territory_id,
    actor_user_id: ev.actor_user_id,
    payload: ev.payload,
    created_at: ev.created_at,
  };
  return `id: ${ev.seq}\nevent: ${ev.type.replace(/[\r\n]/g, '')}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Receives `app_events` NOTIFY payloads and releases events to subscribers in sequence order, so the
 * `id:` a client last saw is a safe resume point: every lower sequence was already released.
 * `watermark` = every sequence up to it has been released (or skipped as a gap).
 */
export class EventHub {
  watermark = 0;
  private started = false;
  private early: [number, string][] = [];
  /** Announced, not fetched yet: seq → organization. */
  private queued = new Map<number, string>();
  private inflight = new Set<number>();
  /**
   * Releasable in sequence order: a committed row, or (a string: its organization) an event nobody on this
   * instance subscribes to, whose row was not fetched; its sequence only moves the watermark. Should a
   * subscriber of that organization arrive before the watermark passes it, it is fetched after all.
   */
  private ready = new Map<number, StoredEvent | string>();
  private gapTimer: NodeJS.Timeout | null = null;
  private flushScheduled = false;
  private closed = false;
  /** The listener is lost: notifications may be missing, so a missing sequence is not skipped. */
  private paused = false;
  private catchingUp: Promise<void> | null = null;
  private catchUpWanted = false;
  private losses = 0;
  /** Skipped by the gap timer: the only sequences at or below the watermark still deliverable (late). */
  private readonly skipped = new Set<number>();
  private readonly stats = { recoveries: 0, recovered_events: 0, last_recovery_at: null as string | null };
  private readonly byOrg = new Map<string, Set<Subscriber>>();

  constructor(
    private readonly source: HubSource,
    private readonly opts: HubOptions,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  /** Call after LISTEN is active: sequences announced before this point are in the past. */
  async start(): Promise<void> {
    this.watermark = await this.source.maxSeq();
    this.started = true;
    for (const [seq, org] of this.early) this.notified(seq, org);
    this.early = [];
  }

  get connections(): number {
    let n = 0;
    for (const s of this.byOrg.values()) n += s.size;
    return n;
  }

  status(): HubStatus {
    const state = !this.started ? 'starting' : this.catchingUp ? 'catching_up' : this.paused ? 'paused' : 'live';
    return { state, watermark: this.watermark, connections: this.connections, ...this.stats };
  }

  /** The listening connection was lost: hold back (never skip) until catchUp() has read the log. */
  listenerLost(): void {
    this.losses++;
    this.paused = true;
  }

  /**
   * Called once LISTEN is active again: reads every event committed above the watermark (and the late
   * ones it skipped) from the log and releases them through the same ordering as notifications, so a
   * subscriber gets each event once. Retries with back-off until the log answers.
   */
  catchUp(): Promise<void> {
    // Before start() there is nothing to catch up: start() reads the current maximum.
    if (!this.started) return Promise.resolve();
    this.catchUpWanted = true;
    this.catchingUp ??= this.runCatchUp().finally(() => (this.catchingUp = null));
    return this.catchingUp;
  }

  private async runCatchUp(): Promise<void> {
    const page = this.opts.catchUpPage ?? 1_000;
    while (this.catchUpWanted && !this.closed) {
      this.catchUpWanted = false;
      const losses = this.losses;
      for (let attempt = 0; !this.closed; attempt++) {
        try {
          let cursor = this.watermark;
          let also = [...this.skipped];
          let delivered = 0;
          for (;;) {
            const rows = await this.source.since(cursor, also, page);
            also = [];
            for (const ev of rows) if (this.accept(ev)) delivered++;
            this.drain();
            if (rows.length < page || this.closed) break;
            cursor = Math.max(cursor, rows[rows.length - 1].seq);
          }
          this.stats.recoveries++;
          this.stats.recovered_events += delivered;
          this.stats.last_recovery_at = new Date().toISOString();
          break;
        } catch (err) {
          this.onError(err);
          await new Promise((r) => setTimeout(r, Math.min(5_000, 100 * 2 ** Math.min(attempt, 6))).unref());
        }
      }
      // Lost again meanwhile: stay paused; its 'restored' asks for another catch-up.
      if (losses === this.losses) this.paused = false;
    }
    this.drain();
  }

  subscribe(sub: Subscriber): () => void {
    let set = this.byOrg.get(sub.organizationId);
    if (!set) this.byOrg.set(sub.organizationId, (set = new Set()));
    set.add(sub);
    // Announced events of this organization that were not fetched (nobody listened) and are not released
    // yet: the new subscriber's replay stops at the current watermark, so they must come live.
    let refetch = false;
    for (const [seq, v] of this.ready) {
      if (v !== sub.organizationId) continue;
      this.ready.delete(seq);
      this.queued.set(seq, v);
      refetch = true;
    }
    if (refetch) this.scheduleFetch();
    return () => {
      set!.delete(sub);
      if (set!.size === 0 && this.byOrg.get(sub.organizationId) === set) this.byOrg.delete(sub.organizationId);
    };
  }

  subscribers(): Iterable<Subscriber> {
    const all: Subscriber[] = [];
    for (const s of this.byOrg.values()) all.push(...s);
    return all;
  }

  /** A NOTIFY payload `{"organization_id","seq"}`. */
  onNotify(payload: string): void {
    let seq: number;
    let org: unknown;
    try {
      const p = JSON.parse(payload) as { seq: unknown; organization_id: unknown };
      seq = Number(p.seq);
      org = p.organization_id;
    } catch {
      return;
    }
    if (!Number.isSafeInteger(seq) || seq <= 0 || typeof org !== 'string' || org === '') return;
    if (!this.started) this.early.push([seq, org]);
    else this.notified(seq, org);
  }

  close(): void {
    this.closed = true;
    if (this.gapTimer) clearTimeout(this.gapTimer);
    this.gapTimer = null;
  }

  private notified(seq: number, org: string): void {
    if (seq <= this.watermark && !this.skipped.has(seq)) return; // already released
    if (this.ready.has(seq) || this.inflight.has(seq) || this.queued.has(seq)) return;
    if (!this.byOrg.has(org)) {
      // Nobody here listens to this organization: no row to read, only the sequence to account for.
      if (seq <= this.watermark) this.skipped.delete(seq);
      else {
        this.ready.set(seq, org);
        this.drain();
      }
      return;
    }
    this.queued.set(seq, org);
    this.scheduleFetch();
  }

  private scheduleFetch(): void {
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      // Coalesce a burst of NOTIFYs into one query.
      setImmediate(() => void this.fetchQueued());
    }
  }

  private async fetchQueued(): Promise<void> {
    this.flushScheduled = false;
    if (this.closed || this.queued.size === 0) return;
    const batch = [...this.queued];
    const seqs = batch.map(([s]) => s);
    this.queued.clear();
    for (const s of seqs) this.inflight.add(s);
    const byOrg = new Map<string, number[]>();
    for (const [s, org] of batch) {
      const list = byOrg.get(org);
      if (list) list.push(s);
      else byOrg.set(org, [s]);
    }
    let rows: StoredEvent[];
    try {
      rows = (await Promise.all([...byOrg].map(([org, list]) => this.source.fetch(org, list)))).flat();
    } catch (err) {
      this.onError(err);
      for (const [s, org] of batch) {
        this.inflight.delete(s);
        this.queued.set(s, org);
      }
      if (!this.closed) setTimeout(() => void this.fetchQueued(), 200).unref();
      return;
    }
    for (const s of seqs) this.inflight.delete(s);
    for (const ev of rows) this.accept(ev);
    this.drain();
  }

  /** A committed row from a notification or the log; true when it will be delivered (not seen before). */
  private accept(ev: StoredEvent): boolean {
    if (ev.seq <= this.watermark) {
      // Released already, unless the gap timer skipped it: then it is late, and goes out now.
      if (!this.skipped.delete(ev.seq)) return false;
      this.release(ev);
      return true;
    }
    if (typeof (this.ready.get(ev.seq) ?? '') !== 'string') return false;
    this.ready.set(ev.seq, ev);
    return true;
  }

  /**
   * Moves the watermark past a gap, remembering every sequence it passes: each may still be a transaction in progress
   * (a saturated service holds thousands open for seconds), and a sequence passed without being remembered would be
   * taken for released when it commits, and never delivered. Bounded: of a gap wider than MAX_SKIPPED only the newest
   * are remembered, and the oldest remembered (most likely rolled back) are forgotten first.
   */
  private skip(upTo: number): void {
    for (let s = Math.max(this.watermark + 1, upTo - MAX_SKIPPED + 1); s <= upTo; s++) this.skipped.add(s);
    for (const s of this.skipped) {
      if (this.skipped.size <= MAX_SKIPPED) break;
      this.skipped.delete(s);
    }
    this.watermark = upTo;
  }

  private drain(): void {
    while (this.ready.has(this.watermark + 1)) {
      const next = this.watermark + 1;
      const ev = this.ready.get(next)!;
      this.ready.delete(next);
      this.watermark = next;
      if (typeof ev !== 'string') this.release(ev);
    }
    if (this.ready.size === 0) {
      if (this.gapTimer) clearTimeout(this.gapTimer);
      this.gapTimer = null;
      return;
    }
    if (!this.gapTimer && !this.closed) {
      this.gapTimer = setTimeout(() => {
        this.gapTimer = null;
        const next = this.watermark + 1;
        // Being fetched: it exists, wait for it.
        if (this.inflight.has(next) || this.queued.has(next)) return void this.drain();
        // Without a listener its notification may be lost, not rolled back: wait for the catch-up.
        if (this.paused || this.catchingUp) return void this.drain();
        if (this.ready.size > 0) this.skip(Math.min(...this.ready.keys()) - 1);
        this.drain();
      }, this.opts.gapTimeoutMs);
      this.gapTimer.unref();
    }
  }

  private release(ev: StoredEvent): void {
    const subs = this.byOrg.get(ev.organization_id);
    if (!subs || subs.size === 0) return;
    const frame = sseFrame(ev);
    for (const sub of [...subs]) {
      try {
        sub.offer(ev, frame);
      } catch (err) {
        this.onError(err);
      }
    }
  }
}
