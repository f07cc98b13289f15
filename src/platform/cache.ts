import type { Database, Tx } from './db/index.js';
import { notifyChannel } from './repo.js';

/**
 * The one in-process cache: entries live `ttlMs` (per value if a function), a burst of misses for one
 * key runs the loader once (single-flight: the others await the same promise), and invalidation is a hook that can
 * be driven from other instances (`invalidateOn`: a NOTIFY channel, and a cleared cache whenever the listening
 * connection is lost, since announcements may have been missed).
 *
 * A load that was in flight when its key was invalidated still answers its callers, but its result is not stored:
 * the next caller loads again, so an invalidation is never undone by a slow, older read.
 */
export interface CacheOptions<V> {
  /** How long a value stays fresh, in ms; a function decides per value (Infinity: until invalidated). */
  ttlMs: number | ((value: V) => number);
  /** Past this many entries the cache is emptied (a crude bound; entries are small). Default 50 000. */
  maxEntries?: number;
  /** The clock (tests). */
  now?: () => number;
}

export interface Cache<K, V> {
  /** The fresh cached value, or the loader's (run once for concurrent misses of one key). */
  get(key: K, load: () => Promise<V>): Promise<V>;
  /**
   * The fresh cached value, or the loader's run for this caller alone (no other caller awaits it: a load that reads in
   * the caller's own transaction must not answer requests whose transactions it is not part of). Its result is stored
   * unless the key was invalidated (or the cache cleared) while it ran.
   */
  getOwn(key: K, load: () => Promise<V>): Promise<V>;
  /** Stores a value known to be current (e.g. a revocation seen on this instance). */
  set(key: K, value: V): void;
  /** Forgets one key (and detaches a load in flight for it). */
  invalidate(key: K): void;
  /** Forgets everything (and detaches every load in flight). */
  clear(): void;
  readonly size: number;
}

export function createCache<K, V>(opts: CacheOptions<V>): Cache<K, V> {
  const now = opts.now ?? (() => Date.now());
  const max = opts.maxEntries ?? 50_000;
  const ttl = typeof opts.ttlMs === 'function' ? opts.ttlMs : () => opts.ttlMs as number;
  const entries = new Map<K, { value: V; expires: number }>();
  const inflight = new Map<K, Promise<V>>();
  // Invalidation clock for `getOwn`: a load stores its result only if its key was not invalidated since it started.
  let tick = 0;
  let clearedAt = 0;
  const invalidatedAt = new Map<K, number>();

  function store(key: K, value: V) {
    if (entries.size >= max && !entries.has(key)) entries.clear();
    entries.set(key, { value, expires: now() + ttl(value) });
  }

  return {
    get(key, load) {
      const hit = entries.get(key);
      if (hit && hit.expires > now()) return Promise.resolve(hit.value);
      const running = inflight.get(key);
      if (running) return running;
      const mine: { p?: Promise<V> } = {};
      mine.p = (async () => {
        try {
          const value = await load();
          // Still the current load of this key (not invalidated meanwhile): keep its result.
          if (inflight.get(key) === mine.p) store(key, value);
          return value;
        } finally {
          if (inflight.get(key) === mine.p) inflight.delete(key);
        }
      })();
      inflight.set(key, mine.p);
      return mine.p;
    },
    async getOwn(key, load) {
      const hit = entries.get(key);
      if (hit && hit.expires > now()) return hit.value;
      const started = tick;
      const value = await load();
      if (clearedAt <= started && (invalidatedAt.get(key) ?? 0) <= started) store(key, value);
      return value;
    },
    set(key, value) {
      inflight.delete(key);
      store(key, value);
    },
    invalidate(key) {
      inflight.delete(key);
      entries.delete(key);
      if (invalidatedAt.size >= max) {
        invalidatedAt.clear();
        clearedAt = tick + 1;
      }
      invalidatedAt.set(key, ++tick);
    },
    clear() {
      inflight.clear();
      entries.clear();
      invalidatedAt.clear();
      clearedAt = ++tick;
    },
    get size() {
      return entries.size;
    },
  };
}

/**
 * Drives a cache from a NOTIFY channel, so a change committed on any instance reaches every instance's cache:
 * `onMessage(payload)` decides what to forget (default: everything). While the listening connection is lost,
 * announcements may be missed, so the cache is emptied when it is lost and again when it is back.
 * Stops with the app (`onClose`).
 */
export function invalidateOn<K, V>(
  ctx: { db: Pick<Database, 'listen' | 'onListenerChange'>; onClose: (() => Promise<void> | void)[] },
  channel: string,
  cache: Cache<K, V>,
  onMessage: (payload: string, cache: Cache<K, V>) => void = (_payload, c) => c.clear(),
): void {
  void ctx.db
    .listen(channel, (payload) => onMessage(payload, cache))
    .then((unlisten) => ctx.onClose.push(unlisten))
    .catch(() => undefined);
  ctx.onClose.push(ctx.db.onListenerChange(() => cache.clear()));
}

/**
 * A per-organization value that every transaction reads and few change (settings): cached on each instance and read
 * in the caller's transaction on a miss (`getOwn`), forgotten on every instance when a change commits. A change calls
 * `changed(tx, key)` in its own transaction: the announcement (NOTIFY on `channel`, payload the key) is delivered at
 * commit to every instance, this one included; this instance also forgets the key at once. Announcements on `alsoOn`
 * (another module's change of what the value is built from, payload the same key) forget the key too. `ttlMs` bounds
 * how long a value can outlive a change made without an announcement (directly in SQL). A missing value (null or
 * undefined) is returned but not kept.
 */
export function createAnnouncedCache<V>(
  ctx: { db: Pick<Database, 'listen' | 'onListenerChange'>; onClose: (() => Promise<void> | void)[] },
  channel: string,
  { ttlMs = 60_000, alsoOn = [] }: { ttlMs?: number; alsoOn?: string[] } = {},
) {
  // A missing value (null, undefined: no row yet, or none visible to the caller) is not kept: it may exist a moment later.
  const cache = createCache<string, V>({ ttlMs: (v) => (v == null ? 0 : ttlMs) });
  for (const ch of [channel, ...alsoOn]) invalidateOn(ctx, ch, cache, (key, c) => (key ? c.invalidate(key) : c.clear()));
  return {
    /** The cached value of `key`, or `load`'s (run in the caller's transaction). */
    get: (key: string, load: () => Promise<V>): Promise<V> => cache.getOwn(key, load),
    /**
     * The cached values of `keys`, the missing ones from one `loadMissing(missing)` (run in the caller's transaction;
     * a key it leaves out is loaded as `absent`). Each missing key is stored as `get` stores it.
     */
    async getMany(keys: string[], loadMissing: (missing: string[]) => Promise<Map<string, V>>, absent: V): Promise<Map<string, V>> {
      const missing: string[] = [];
      let answer!: { resolve: (m: Map<string, V>) => void; reject: (e: unknown) => void };
      const loaded = new Promise<Map<string, V>>((resolve, reject) => (answer = { resolve, reject }));
      // `getOwn` runs a missing key's loader before its first await, so every miss is in `missing` once the calls are made.
      const values = keys.map((key) =>
        cache.getOwn(key, async () => {
          missing.push(key);
          const m = await loaded;
          return m.has(key) ? m.get(key)! : absent;
        }),
      );
      if (missing.length > 0) loadMissing(missing).then(answer.resolve, answer.reject);
      else answer.resolve(new Map());
      const got = await Promise.all(values);
      return new Map(keys.map((key, i) => [key, got[i]]));
    },
    /** In the transaction of a change of `key`'s value: every instance forgets it at commit, this one at once too. */
    async changed(tx: Tx, key: string): Promise<void> {
      await notifyChannel(tx, channel, key);
      cache.invalidate(key);
    },
    /** In the transaction of a change of any number of values: every instance forgets them all at commit, this one at once too. */
    async changedAll(tx: Tx): Promise<void> {
      await notifyChannel(tx, channel, '');
      cache.clear();
    },
    get size() {
      return cache.size;
    },
  };
}

export type AnnouncedCache<V> = ReturnType<typeof createAnnouncedCache<V>>;
