import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, waitFor, type TestApp } from '../../test/helpers.js';
import { createAnnouncedCache, createCache, invalidateOn } from './cache.js';

const deferred = <T>() => {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
};

describe('createCache', () => {
  it('single-flight: a burst of misses for one key runs the loader once', async () => {
    const cache = createCache<string, number>({ ttlMs: 1_000 });
    let loads = 0;
    const gate = deferred<number>();
    const burst = Array.from({ length: 50 }, () => cache.get('k', () => (loads++, gate.promise)));
    gate.resolve(7);
    expect(await Promise.all(burst)).toEqual(Array(50).fill(7));
    expect(loads).toBe(1);
    expect(await cache.get('k', async () => (loads++, 8))).toBe(7); // fresh: served from the cache
    expect(loads).toBe(1);
  });

  it('a failed load is not cached and does not block the next one', async () => {
    const cache = createCache<string, number>({ ttlMs: 1_000 });
    await expect(
      Promise.all([cache.get('k', async () => Promise.reject(new Error('down'))), cache.get('k', async () => 1)]),
    ).rejects.toThrow('down');
    expect(await cache.get('k', async () => 2)).toBe(2);
  });

  it('entries expire after their TTL (per value when a function)', async () => {
    let clock = 0;
    const cache = createCache<string, boolean>({ ttlMs: (v) => (v ? 5_000 : Infinity), now: () => clock });
    await cache.get('live', async () => true);
    await cache.get('dead', async () => false);
    clock = 4_999;
    expect(await cache.get('live', async () => false)).toBe(true);
    clock = 5_000;
    expect(await cache.get('live', async () => false)).toBe(false); // reloaded
    clock = 10 ** 9;
    expect(await cache.get('dead', async () => true)).toBe(false); // never expires
  });

  it('an invalidation during a load wins: the older result answers its caller but is not stored', async () => {
    const cache = createCache<string, string>({ ttlMs: 60_000 });
    const gate = deferred<string>();
    const slow = cache.get('k', () => gate.promise);
    cache.invalidate('k');
    const fresh = await cache.get('k', async () => 'new');
    gate.resolve('old');
    expect(await slow).toBe('old');
    expect(fresh).toBe('new');
    expect(await cache.get('k', async () => 'again')).toBe('new');
    cache.clear();
    expect(cache.size).toBe(0);
    expect(await cache.get('k', async () => 'after clear')).toBe('after clear');
  });

  it('getOwn: each caller runs its own load (none shared), and a load overtaken by an invalidation is not stored', async () => {
    const cache = createCache<string, string>({ ttlMs: 60_000 });
    const gate = deferred<string>();
    let loads = 0;
    const slow = cache.getOwn('k', () => (loads++, gate.promise));
    const other = await cache.getOwn('k', async () => (loads++, 'mine'));
    expect(other).toBe('mine'); // not the slow caller's load
    expect(loads).toBe(2);
    cache.invalidate('k');
    gate.resolve('old');
    expect(await slow).toBe('old');
    // 'mine' finished before the invalidation and was forgotten by it; 'old' started before it: not stored either.
    expect(await cache.getOwn('k', async () => 'reloaded')).toBe('reloaded');
    expect(await cache.getOwn('k', async () => 'again')).toBe('reloaded');
    const beforeClear = cache.getOwn('j', () => gate.promise.then(() => 'stale'));
    cache.clear();
    await beforeClear;
    expect(await cache.getOwn('j', async () => 'fresh')).toBe('fresh');
  });

  it('is bounded: past maxEntries it starts over', async () => {
    const cache = createCache<number, number>({ ttlMs: 60_000, maxEntries: 3 });
    for (const k of [1, 2, 3, 4]) await cache.get(k, async () => k);
    expect(cache.size).toBe(1);
  });
});

describe('invalidateOn (across instances, through NOTIFY)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  it('a notification on the channel invalidates the key it names; a lost listener empties the cache', async () => {
    const onClose: (() => Promise<void> | void)[] = [];
    const cache = createCache<string, number>({ ttlMs: 60_000 });
    invalidateOn({ db: t.db, onClose }, 'cache_test_changed', cache, (key, c) => c.invalidate(key));
    await cache.get('a', async () => 1);
    await cache.get('b', async () => 2);
    // Announce a change from "another instance" (any connection) until one lands: the LISTEN is set up in the
    // background, and an announcement before it is in place is lost.
    await waitFor(
      async () => {
        await t.db.withSystem((tx) => tx.query("SELECT pg_notify('cache_test_changed', 'a')"));
        return waitFor(() => cache.size < 2, { timeout: 1_000 }).catch(() => false);
      },
      { message: 'the invalidation' },
    );
    expect(await cache.get('a', async () => 10)).toBe(10);
    expect(await cache.get('b', async () => 20)).toBe(2);
    for (const fn of onClose) await fn();
  });
});

describe('createAnnouncedCache (a change announced in its transaction)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  it('forgets the key here at once and on every instance at commit; a rolled-back change announces nothing', async () => {
    const onClose: (() => Promise<void> | void)[] = [];
    const here = createAnnouncedCache<number>({ db: t.db, onClose }, 'announced_test_changed', { alsoOn: ['announced_test_other'] });
    const there = createAnnouncedCache<number>({ db: t.db, onClose }, 'announced_test_changed');
    let version = 1;
    const load = async () => version;
    // Both listeners are in place once an announcement reaches both (LISTEN is set up in the background).
    await waitFor(
      async () => {
        await here.get('org-a', load);
        await there.get('org-a', load);
        await t.db.withSystem((tx) => here.changed(tx, 'org-a'));
        return waitFor(() => here.size === 0 && there.size === 0, { timeout: 1_000 }).catch(() => false);
      },
      { message: 'both listeners' },
    );

    expect(await there.get('org-a', load)).toBe(1);
    expect(await there.get('org-b', load)).toBe(1);
    // A rolled-back change: this instance forgot at once, the other never hears of it.
    await expect(
      t.db.withSystem(async (tx) => {
        await here.changed(tx, 'org-a');
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    version = 2;
    expect(await there.get('org-a', load)).toBe(1);
    // A committed change of org-a reaches the other instance; org-b stays cached.
    await t.db.withSystem((tx) => here.changed(tx, 'org-a'));
    await waitFor(() => there.size === 1, { message: 'the announcement at commit' });
    expect(await there.get('org-a', load)).toBe(2);
    expect(await there.get('org-b', load)).toBe(1);
    // Another channel it listens on (what the value is built from) forgets the key it names.
    expect(await here.get('org-b', load)).toBe(2);
    expect(await here.get('org-c', load)).toBe(2);
    version = 3;
    await waitFor(
      async () => {
        await t.db.withSystem((tx) => tx.query("SELECT pg_notify('announced_test_other', 'org-b')"));
        return waitFor(() => here.size === 1, { timeout: 1_000 }).catch(() => false);
      },
      { message: 'the other channel' },
    );
    expect(await here.get('org-b', load)).toBe(3);
    expect(await here.get('org-c', load)).toBe(2);
    for (const fn of onClose) await fn();
  });

  it('getMany: the cached keys as they are, the missing ones from one load (a key it leaves out is stored as absent)', async () => {
    const onClose: (() => Promise<void> | void)[] = [];
    const cache = createAnnouncedCache<string[]>({ db: t.db, onClose }, 'announced_many_changed');
    await cache.get('a', async () => ['a1']);
    const asked: string[][] = [];
    const gate = deferred<void>();
    const many = cache.getMany(
      ['a', 'b', 'c'],
      async (missing) => {
        asked.push(missing);
        await gate.promise;
        return new Map([['b', ['b1', 'b2']]]);
      },
      [],
    );
    // A change of c while it loads: c's load answers this caller but is not kept.
    await t.db.withSystem((tx) => cache.changed(tx, 'c'));
    gate.resolve();
    expect(await many).toEqual(
      new Map([
        ['a', ['a1']],
        ['b', ['b1', 'b2']],
        ['c', []],
      ]),
    );
    expect(asked).toEqual([['b', 'c']]);
    expect(await cache.getMany(['a', 'b', 'c'], async (missing) => (asked.push(missing), new Map([['c', ['c1']]])), [])).toEqual(
      new Map([
        ['a', ['a1']],
        ['b', ['b1', 'b2']],
        ['c', ['c1']],
      ]),
    );
    expect(asked).toEqual([['b', 'c'], ['c']]);
    for (const fn of onClose) await fn();
  });
});
