import type { ServerResponse } from 'node:http';
import type { StoredEvent } from '../../../platform/events.js';
import type { Subscriber } from './hub.js';

/** Which events a stream carries; the same rule is applied in SQL for the replay (see replayFilter in repo.ts). */
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

export interface ConnectionOptions {
  organizationId: string;
  userId: string;
  sessionId: string;
  filter: StreamFilter;
  /** Bytes a socket that is not draining may hold; beyond this the connection is dropped (the client resumes). */
  maxBufferBytes: number;
  /** Live events parked while the replay runs; beyond this the connection is dropped. */
  maxParked: number;
  resumeFrom: number | null;
  onClose: (reason: string) => void;
}

/**
 * One SSE client. While the replay runs, live events are parked; afterwards they are written directly.
 * Memory per connection is bounded: when the bytes waiting in the socket's buffer exceed
 * `maxBufferBytes` (the client does not read), the connection is destroyed and the client resumes with
 * Last-Event-ID. The replay waits for 'drain' instead, so it never outruns the client.
 */
export class SseConnection implements Subscriber {
  readonly organizationId: string;
  readonly userId: string;
  readonly sessionId: string;
  closed = false;
  private replaying = true;
  private parked: { ev: StoredEvent; frame: string }[] = [];
  private replayed = new Set<number>();

  constructor(
    private readonly res: ServerResponse,
    private readonly opts: ConnectionOptions,
  ) {
    this.organizationId = opts.organizationId;
    this.userId = opts.userId;
    this.sessionId = opts.sessionId;
  }

  offer(ev: StoredEvent, frame: string): void {
    if (this.closed || !matches(this.opts.filter, ev)) return;
    if (this.replaying) {
      this.parked.push({ ev, frame });
      if (this.parked.length > this.opts.maxParked) this.close('replay_overflow');
      return;
    }
    if (this.isDuplicate(ev.seq)) return;
    this.write(frame);
  }

  /** A frame of the replay (read from the table); the caller awaits drained() when needsDrain. */
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

  get needsDrain(): boolean {
    return this.res.writableNeedDrain;
  }

  get bufferedBytes(): number {
    return this.res.writableLength;
  }

  async drained(): Promise<void> {
    if (!this.res.writableNeedDrain || this.closed) return;
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
    this.res.write(chunk);
    if (this.res.writableLength > this.opts.maxBufferBytes) this.close('slow_consumer');
  }

  close(reason: string): void {
    if (this.closed) return;
    this.closed = true;
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
}
