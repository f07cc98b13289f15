import type { StoredEvent } from '../../platform/events.js';

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
}

export interface HubOptions {
  /**
   * How long a missing sequence holds back later ones. Sequences are allocated at insert but become
   * visible at commit, so seq 11 can commit before seq 10; releasing 11 first would let a client
   * resume from 11 and never see 10. A sequence that never shows up was rolled back (or its NOTIFY
   * lost): after this delay it is skipped, and if it does arrive later it is still delivered.
   */
  gapTimeoutMs: number;
}

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
  private ready = new Map<number, StoredEvent>();
  private gapTimer: NodeJS.Timeout | null = null;
  private flushScheduled = false;
  private closed = false;
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

  subscribe(sub: Subscriber): () => void {
    let set = this.byOrg.get(sub.organizationId);
    if (!set) this.byOrg.set(sub.organizationId, (set = new Set()));
    set.add(sub);
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
    if (this.ready.has(seq) || this.inflight.has(seq) || this.queued.has(seq)) return;
    this.queued.set(seq, org);
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
    for (const ev of rows) {
      if (ev.seq <= this.watermark) this.release(ev); // late: its gap was already skipped
      else this.ready.set(ev.seq, ev);
    }
    this.drain();
  }

  private drain(): void {
    while (this.ready.has(this.watermark + 1)) {
      const ev = this.ready.get(this.watermark + 1)!;
      this.ready.delete(ev.seq);
      this.watermark = ev.seq;
      this.release(ev);
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
        if (this.ready.size > 0) this.watermark = Math.min(...this.ready.keys()) - 1;
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
