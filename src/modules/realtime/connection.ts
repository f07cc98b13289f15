import type { ServerResponse } from 'node:http';
import type { StoredEvent } from '../../platform/events.js';
import type { Subscriber } from './hub.js';

/** Which events a stream carries; the same rule is applied in SQL for the replay (see replayFilter). */
export type StreamFilter =
  | { kind: 'me'; userId: string }
  | { kind: 'organization' }
  | { kind: 'trip'; tripId: string }
  | { kind: 'territories'; territoryIds: string[] };

/** `notification.created` is personal: it only travels on the recipient's own stream. */
export function matches(filter: StreamFilter, ev: StoredEvent): boolean {
  switch (filter.kind) {
    case 'me':
      return ev.audience_user_ids.includes(filter.userId);
    case 'organization':
      return ev.type !== 'notification.created';
    case 'trip':
      return ev.entity_type === 'trip' && ev.entity_id === filter.tripId;
    case 'territories':
      return ev.type !== 'notification.created' && ev.territory_id !== null && filter.territoryIds.includes(ev.territory_id);
  }
}

/** SQL for the same rule, with its parameters starting at `$first`. */
export function replayFilter(filter: StreamFilter, first: number): { sql: string; params: unknown[] } {
  switch (filter.kind) {
    case 'me':
      return { sql: `$${first}::text = ANY(audience_user_ids)`, params: [filter.userId] };
    case 'organization':
      return { sql: `type <> 'notification.created'`, params: [] };
    case 'trip':
      return { sql: `entity_type = 'trip' AND entity_id = $${first}`, params: [filter.tripId] };
    case 'territories':
      return { sql: `type <> 'notification.created' AND territory_id = ANY($${first}::text[])`, params: [filter.territoryIds] };
  }
}

export interface ConnectionOptions {
  organizationId: string;
  userId: string;
  sessionId: string;
  filter: StreamFilter;
  /** Frames held for a socket that is not draining; beyond this the connection is dropped (the client resumes). */
  maxQueue: number;
  /** Live events held while the replay runs are bounded by the same limit. */
  resumeFrom: number | null;
  onClose: (reason: string) => void;
}

/**
 * One SSE client. While the replay runs, live events are parked; afterwards they are written directly.
 * Writes respect backpressure: when the socket buffer is full, frames queue in memory up to `maxQueue`,
 * and a client that still does not drain is disconnected, so a slow consumer costs bounded memory.
 */
export class SseConnection implements Subscriber {
  readonly organizationId: string;
  readonly userId: string;
  readonly sessionId: string;
  closed = false;
  private replaying = true;
  private parked: { ev: StoredEvent; frame: string }[] = [];
  private replayed = new Set<number>();
  private queue: string[] = [];
  private blocked = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly opts: ConnectionOptions,
  ) {
    this.organizationId = opts.organizationId;
    this.userId = opts.userId;
    this.sessionId = opts.sessionId;
    res.on('drain', () => this.flush());
  }

  offer(ev: StoredEvent, frame: string): void {
    if (this.closed || !matches(this.opts.filter, ev)) return;
    if (this.replaying) {
      this.parked.push({ ev, frame });
      if (this.parked.length > this.opts.maxQueue) this.close('replay_overflow');
      return;
    }
    if (this.isDuplicate(ev.seq)) return;
    this.write(frame);
  }

  /** A frame of the replay (read from the table). */
  replay(ev: StoredEvent, frame: string): void {
    this.replayed.add(ev.seq);
    this.write(frame);
  }

  /** Ends the replay: parked live events that the replay did not already carry go out in order. */
  goLive(): void {
    this.replaying = false;
    const parked = this.parked;
    this.parked = [];
    for (const p of parked) if (!this.isDuplicate(p.ev.seq)) this.write(p.frame);
    // Later events are all above the replay range; only a late (gap-skipped) event could repeat one.
    if (this.replayed.size > 10_000) this.replayed.clear();
  }

  get backlog(): number {
    return this.queue.length + this.parked.length;
  }

  /** Waits until the socket has drained (used by the replay so it never outruns the client). */
  async drained(): Promise<void> {
    if (!this.blocked || this.closed) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }

  write(chunk: string): void {
    if (this.closed) return;
    if (this.blocked) {
      this.queue.push(chunk);
      if (this.queue.length > this.opts.maxQueue) this.close('slow_consumer');
      return;
    }
    if (!this.res.write(chunk)) this.blocked = true;
  }

  close(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    this.parked = [];
    this.replayed.clear();
    this.opts.onClose(reason);
    // destroy, not end: a slow consumer's unsent buffer is freed at once, and it reconnects with Last-Event-ID.
    if (reason === 'slow_consumer' || reason === 'replay_overflow') this.res.destroy();
    else this.res.end();
  }

  private isDuplicate(seq: number): boolean {
    return (this.opts.resumeFrom !== null && seq <= this.opts.resumeFrom) || this.replayed.has(seq);
  }

  private flush(): void {
    this.blocked = false;
    while (this.queue.length > 0 && !this.blocked && !this.closed) {
      if (!this.res.write(this.queue.shift()!)) this.blocked = true;
    }
  }
}
