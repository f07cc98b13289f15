import { describe, expect, it } from 'vitest';
import { EventHub, type Subscriber } from './hub.js';
import type { StoredEvent } from '../../platform/events.js';

/** The hub's ordering rules, driven directly: committed rows live in a map, NOTIFYs are calls. */
function setup(gapTimeoutMs = 80) {
  const committed = new Map<number, StoredEvent>();
  const hub = new EventHub({ fetch: async (_org, seqs) => seqs.filter((s) => committed.has(s)).map((s) => committed.get(s)!), maxSeq: async () => 10 }, { gapTimeoutMs });
  const got: number[] = [];
  const sub: Subscriber = { organizationId: 'o', offer: (ev) => got.push(ev.seq) };
  hub.subscribe(sub);
  const commit = (seq: number) => {
    committed.set(seq, { seq, id: `e${seq}`, organization_id: 'o', type: 't', entity_type: 'x', entity_id: 'y', territory_id: null, actor_user_id: null, audience_user_ids: [], payload: {}, created_at: new Date() });
    hub.onNotify(JSON.stringify({ organization_id: 'o', seq }));
  };
  return { hub, got, commit };
}
const tick = (ms = 10) => new Promise((r) => setTimeout(r, ms));

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
});
