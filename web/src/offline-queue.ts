/**
 * Durable offline storage for the installable pages (IndexedDB; no library): a key-value store for the page's
 * last known data (the sync cursor, trips...), and a queue of work done without a network, kept across reloads,
 * closed tabs and a lost session until the server has answered it.
 *
 * A queued operation is one `/mobile/sync/push` operation: its `client_operation_id` is chosen once, when the
 * work is done, so however many times it is sent (a retry after a cut, a reload in the middle), the server
 * applies it once. An operation may wait for files (`blobs`: a photo taken offline): `drain` uploads them first
 * and records the stored object's id in the operation before sending it, so a retry does not upload again.
 */

export interface QueuedOp {
  /** The client_operation_id, chosen when queued. */
  id: string;
  /** Order of the queue (auto-numbered). */
  seq?: number;
  type: string;
  payload: Record<string, unknown>;
  /** Who queued it (a different user logging in on the phone does not send it). */
  user_id: string;
  created_at: string;
  /** Files this operation waits for: name → blob key in the `blobs` store (removed once uploaded). */
  blobs?: Record<string, string>;
  /** What was uploaded for it: name → stored object id. */
  uploaded?: Record<string, string>;
  /** A short description for the page ("Entrega del viaje …"). */
  label?: string;
}

export interface StoredBlob {
  key: string;
  blob: Blob;
  /** What the upload needs (trip, stage, proof type...), free form. */
  meta: Record<string, string>;
}

/** The server's answer to one operation (the `results` of /mobile/sync/push). */
export interface OpResult {
  client_operation_id: string;
  type: string;
  status: 'applied' | 'conflict' | 'rejected' | 'error';
  replayed: boolean;
  code?: string;
  message?: string;
  data?: unknown;
  server?: unknown;
}

type StoreName = 'kv' | 'ops' | 'blobs' | 'points';

function req<T>(r: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

/** One IndexedDB database per page (`pwa:driver`), with the stores above. */
export class OfflineStore {
  private db: Promise<IDBDatabase>;
  constructor(name: string) {
    this.db = new Promise((resolve, reject) => {
      const open = indexedDB.open(`pwa:${name}`, 1);
      open.onupgradeneeded = () => {
        const db = open.result;
        db.createObjectStore('kv');
        db.createObjectStore('ops', { keyPath: 'seq', autoIncrement: true }).createIndex('id', 'id', { unique: true });
        db.createObjectStore('blobs', { keyPath: 'key' });
        db.createObjectStore('points', { keyPath: 'client_point_id' });
      };
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
  }

  private async tx<T>(store: StoreName, mode: IDBTransactionMode, fn: (s: IDBObjectStore) => IDBRequest<T>): Promise<T> {
    const db = await this.db;
    const t = db.transaction(store, mode);
    const out = await req(fn(t.objectStore(store)));
    await new Promise<void>((resolve, reject) => {
      t.oncomplete = () => resolve();
      t.onerror = () => reject(t.error);
      t.onabort = () => reject(t.error);
    });
    return out;
  }

  get<T>(key: string): Promise<T | undefined> {
    return this.tx('kv', 'readonly', (s) => s.get(key) as IDBRequest<T | undefined>);
  }
  async set(key: string, value: unknown): Promise<void> {
    await this.tx('kv', 'readwrite', (s) => s.put(value, key));
  }
  all<T>(store: Exclude<StoreName, 'kv'>): Promise<T[]> {
    return this.tx(store, 'readonly', (s) => s.getAll() as IDBRequest<T[]>);
  }
  async put(store: Exclude<StoreName, 'kv'>, value: unknown): Promise<void> {
    await this.tx(store, 'readwrite', (s) => s.put(value));
  }
  async delete(store: Exclude<StoreName, 'kv'>, key: IDBValidKey): Promise<void> {
    await this.tx(store, 'readwrite', (s) => s.delete(key));
  }
  count(store: Exclude<StoreName, 'kv'>): Promise<number> {
    return this.tx(store, 'readonly', (s) => s.count());
  }
  /** The first `n` records of a store in key order. */
  first<T>(store: Exclude<StoreName, 'kv'>, n: number): Promise<T[]> {
    return this.tx(store, 'readonly', (s) => s.getAll(null, n) as IDBRequest<T[]>);
  }
}

/** A unique id for a client operation or GPS point (also on old phones without crypto.randomUUID). */
export function clientId(prefix: string): string {
  const rnd =
    typeof crypto.randomUUID === 'function' ? crypto.randomUUID() : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  return `${prefix}-${rnd}`;
}

export interface DrainHooks {
  /** Uploads one file, returns the stored object's id; throws an Error with `fatal` set when retrying cannot help. */
  upload(blob: StoredBlob, op: QueuedOp): Promise<string>;
  /** Fills the uploaded ids into the payload before sending. */
  resolve(op: QueuedOp): Record<string, unknown>;
  /** POST /mobile/sync/push; throws when the network or the server fails (the queue stays). */
  push(ops: { client_operation_id: string; type: string; payload: Record<string, unknown> }[]): Promise<OpResult[]>;
}

/** The queue of offline work in an OfflineStore. */
export class OfflineQueue {
  private running: Promise<OpResult[]> | null = null;
  constructor(private store: OfflineStore) {}

  async add(op: Omit<QueuedOp, 'created_at' | 'seq'>, files: StoredBlob[] = []): Promise<void> {
    for (const f of files) await this.store.put('blobs', f);
    await this.store.put('ops', { ...op, created_at: new Date().toISOString() });
  }

  async pending(userId?: string): Promise<QueuedOp[]> {
    const all = await this.store.all<QueuedOp>('ops');
    return userId ? all.filter((o) => o.user_id === userId) : all;
  }

  /**
   * Sends the queue in order (at most 100 operations a push, the route's limit); an operation waiting for files has
   * them uploaded first. Every answered operation (applied, conflict, rejected) leaves the queue; `error` answers and
   * network failures stop the drain and keep the rest for the next one. One drain at a time: a second call joins it.
   */
  drain(userId: string, hooks: DrainHooks): Promise<OpResult[]> {
    this.running ??= this.run(userId, hooks).finally(() => (this.running = null));
    return this.running;
  }

  /** Why the last drain stopped early (the network, a server error), null when it emptied the queue. */
  lastError: unknown = null;

  private async run(userId: string, hooks: DrainHooks): Promise<OpResult[]> {
    const answered: OpResult[] = [];
    this.lastError = null;
    try {
      await this.loop(userId, hooks, answered);
    } catch (err) {
      this.lastError = err;
    }
    return answered;
  }

  private async loop(userId: string, hooks: DrainHooks, answered: OpResult[]): Promise<void> {
    for (;;) {
      const ops = (await this.pending(userId)).slice(0, 100);
      if (ops.length === 0) return;
      const ready: QueuedOp[] = [];
      for (const op of ops) {
        const missing = Object.entries(op.blobs ?? {});
        let failed: OpResult | null = null;
        for (const [name, key] of missing) {
          const blob = (await this.store.all<StoredBlob>('blobs')).find((b) => b.key === key);
          if (blob) {
            try {
              const objectId = await hooks.upload(blob, op);
              op.uploaded = { ...op.uploaded, [name]: objectId };
            } catch (err) {
              if (!(err as { fatal?: boolean }).fatal) throw err;
              // The upload itself was refused (the trip is no longer this driver's...): the operation is answered with it.
              failed = {
                client_operation_id: op.id,
                type: op.type,
                status: 'conflict',
                replayed: false,
                code: (err as { code?: string }).code,
                message: (err as Error).message,
              };
            }
          }
          delete op.blobs![name];
          await this.store.put('ops', op);
          await this.store.delete('blobs', key);
          if (failed) break;
        }
        if (failed) {
          for (const key of Object.values(op.blobs ?? {})) await this.store.delete('blobs', key);
          await this.store.delete('ops', op.seq!);
          answered.push(failed);
          continue;
        }
        ready.push(op);
        // Upload-only entries (a signature kept as evidence) have nothing to push.
      }
      const toPush = ready.filter((o) => o.type !== 'upload');
      for (const o of ready.filter((o) => o.type === 'upload')) {
        await this.store.delete('ops', o.seq!);
        answered.push({ client_operation_id: o.id, type: 'upload', status: 'applied', replayed: false, data: o.uploaded });
      }
      if (toPush.length === 0) continue;
      const results = await hooks.push(toPush.map((o) => ({ client_operation_id: o.id, type: o.type, payload: hooks.resolve(o) })));
      let stop = false;
      for (const r of results) {
        const op = toPush.find((o) => o.id === r.client_operation_id);
        if (!op) continue;
        if (r.status === 'error') {
          stop = true;
          this.lastError = new Error(r.message ?? 'server error');
          continue;
        }
        await this.store.delete('ops', op.seq!);
        answered.push(r);
      }
      if (stop) return;
    }
  }
}
