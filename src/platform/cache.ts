import type { Database } from './db/index.js';

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
    set(key, value) {
      inflight.delete(key);
      store(key, value);
    },
    invalidate(key) {
      inflight.delete(key);
      entries.delete(key);
    },
    clear() {
      inflight.clear();
      entries.clear();
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
