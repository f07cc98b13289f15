import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EventHub, type Subscriber } from './hub.js';
import type { StoredEvent } from '../../../platform/events.js';

/** The hub's ordering rules, driven directly: committed rows live in a map, NOTIFYs are calls. */
function setup(gapTimeoutMs = 80) {
  const committed = new Map<number, StoredEvent>();
  const source = {
    down: false,
    fetch: async (_org: string, seqs: number[]) => seqs.filter((s) => committed.has(s)).map((s) => committed.get(s)!),
    maxSeq: async () => 10,
    since: async (after: number, also: number[], limit: number) => {
      if (source.down) throw new Error('connection refused');
      return [...committed.values()]
        .filter((e) => e.seq > after || also.includes(e.seq))
        .sort((a, b) => a.seq - b.seq)
        .slice(0, limit);
    },
  };
  const hub = new EventHub(source, { gapTimeoutMs, catchUpPage: 3 });
  const got: number[] = [];
  const sub: Subscriber = { organizationId: 'o', offer: (ev) => got.push(ev.seq) };
  hub.subscribe(sub);
  /** Commits a row; `notify: false` = its NOTIFY is lost (the listener is down). */
  const commit = (seq: number, notify = true) => {
    committed.set(seq, {
      seq,
      id: `e${seq}`,
      organization_id: 'o',
      type: 't',
      entity_type: 'x',
      entity_id: 'y',
      territory_id: null,
      actor_user_id: null,
      audience_user_ids: [],
      payload: {},
      created_at: new Date(),
    });
    if (notify) hub.onNotify(JSON.stringify({ organization_id: 'o', seq }));
  };
  return { hub, got, commit, source };
}
// The hub's timers (the gap timer, the fetch on the next turn, the catch-up back-off) run on a fake clock: a test
// moves it by as much as it wants to see pass, and every timer due by then has run, with the promises it started.
beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});
const tick = (ms = 10) => vi.advanceTimersByTimeAsync(ms);

describe('EventHub ordering', () => {
  it('releases in sequence order when commits arrive out of order', async () => {
    const { hub, got, commit } = setup();
    await hub.start();
    commit(12);
    await tick();
    expect(got).toEqual([]); // 11 is not committed yet: 12 waits
    commit(11);
    await tick();
    expect(got).toEqual([11, 12]);
    expect(hub.watermark).toBe(12);
    hub.close();
  });

  it('skips a sequence that never commits (rollback) after the gap timeout, and still delivers it if it turns up', async () => {
    const { hub, got, commit } = setup(50);
    await hub.start();
    commit(12);
    await tick(20);
    expect(got).toEqual([]);
    await tick(80);
    expect(got).toEqual([12]);
    commit(11); // late: delivered anyway
    await tick();
    expect(got).toEqual([12, 11]);
    expect(hub.watermark).toBe(12);
    hub.close();
  });

  it('delivers late every sequence of a gap wider than a thousand, once they commit', async () => {
    const { hub, got, commit } = setup(50);
    await hub.start();
    // 11..1510 are transactions still open (a saturated service); 1511 committed.
    commit(1511);
    await tick(80);
    expect(got).toEqual([1511]);
    expect(hub.watermark).toBe(1511);
    for (const s of [11, 1010, 1011, 1200, 1510]) commit(s);
    await tick();
    expect(got).toEqual([1511, 11, 1010, 1011, 1200, 1510]);
    commit(1200); // its NOTIFY again: not twice
    await tick();
    expect(got.filter((s) => s === 1200)).toHaveLength(1);
    hub.close();
  });

  it('ignores malformed payloads and events of other organizations', async () => {
    const { hub, got, commit } = setup();
    await hub.start();
    hub.onNotify('not json');
    hub.onNotify(JSON.stringify({ seq: -1 }));
    commit(11);
    await tick();
    expect(got).toEqual([11]);
    hub.close();
  });

  it('after a lost listener, catches up from the log: every event once, in order, none skipped while paused', async () => {
    // A gap timeout off the back-off's beat (100, 200 ms): the catch-up ends between two gap timers, as it would in
    // real time, not on the same millisecond as one.
    const { hub, got, commit, source } = setup(37);
    await hub.start();
    commit(11);
    await tick();
    hub.listenerLost();
    // Committed while nothing listens: 12..18 announce nothing; 20 is announced once listening resumes.
    for (let s = 12; s <= 18; s++) commit(s, false);
    source.down = true; // the first catch-up attempts fail: retried, not cached
    const catching = hub.catchUp();
    commit(20); // 19 not committed yet: 20 waits, and is not skipped past 19 while catching up
    await tick(150);
    expect(hub.status().state).toBe('catching_up');
    expect(got).toEqual([11]);
    source.down = false;
    // The next attempt comes after its back-off: the clock moves timer by timer until the catch-up is done, no further.
    let caughtUp = false;
    void catching.then(() => (caughtUp = true));
    while (!caughtUp) await vi.advanceTimersToNextTimerAsync();
    commit(19);
    await tick(50);
    // Notified again after the catch-up released them: nothing twice.
    commit(13);
    commit(20);
    await tick(50);
    expect(got).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    expect(hub.status()).toMatchObject({ state: 'live', watermark: 20, recoveries: 1, recovered_events: 7 });
    hub.close();
  });

  it('delivers a gap-skipped event that committed during the outage, once', async () => {
    const { hub, got, commit } = setup(30);
    await hub.start();
    commit(12);
    await tick(80); // 11 skipped
    expect(got).toEqual([12]);
    hub.listenerLost();
    commit(11, false);
    commit(13, false);
    await hub.catchUp();
    commit(11);
    await tick();
    expect(got).toEqual([12, 11, 13]);
    hub.close();
  });
});

describe('EventHub reads rows only for organizations someone listens to', () => {
  function counting() {
    const committed = new Map<number, StoredEvent>();
    const fetched: [string, number[]][] = [];
    const source = {
      fetch: async (org: string, seqs: number[]) => {
        fetched.push([org, [...seqs]]);
        return seqs.filter((s) => committed.has(s)).map((s) => committed.get(s)!);
      },
      maxSeq: async () => 10,
      since: async () => [],
    };
    const hub = new EventHub(source, { gapTimeoutMs: 5_000 });
    const commit = (seq: number, org: string) => {
      committed.set(seq, {
        seq,
        id: `e${seq}`,
        organization_id: org,
        type: 't',
        entity_type: 'x',
        entity_id: 'y',
        territory_id: null,
        actor_user_id: null,
        audience_user_ids: [],
        payload: {},
        created_at: new Date(),
      });
      hub.onNotify(JSON.stringify({ organization_id: org, seq }));
    };
    return { hub, fetched, commit };
  }

  it('fetches nothing for a NOTIFY of an organization without subscribers, and does not hold later events back', async () => {
    const { hub, fetched, commit } = counting();
    const got: number[] = [];
    hub.subscribe({ organizationId: 'watched', offer: (ev) => got.push(ev.seq) });
    await hub.start();
    commit(11, 'nobody');
    commit(12, 'nobody');
    commit(13, 'watched');
    await tick();
    // 11 and 12 were accounted for without a read; 13 went out at once (gap timeout is 5 s).
    expect(fetched).toEqual([['watched', [13]]]);
    expect(got).toEqual([13]);
    expect(hub.watermark).toBe(13);
    hub.close();
  });

  it('fetches an unread event after all when its organization gets a subscriber before it is released', async () => {
    const { hub, fetched, commit } = counting();
    await hub.start();
    commit(12, 'late'); // 11 not committed yet: 12 waits, unread
    await tick();
    expect(fetched).toEqual([]);
    const got: number[] = [];
    hub.subscribe({ organizationId: 'late', offer: (ev) => got.push(ev.seq) });
    await tick();
    expect(fetched).toEqual([['late', [12]]]);
    commit(11, 'nobody');
    await tick();
    expect(got).toEqual([12]);
    expect(hub.watermark).toBe(12);
    expect(fetched).toEqual([['late', [12]]]);
    hub.close();
  });
});
