import type { Database, Tx } from '../src/platform/db/index.js';

/**
 * A Database that notes the exchanges of the requests it is told to count, told apart by their request id
 * (`X-Request-Id`, carried by the actor that every tenant transaction and read receives): every `tx.query` /
 * `tx.exec` (the first one carries BEGIN and the tenant settings), the COMMIT, and every statement of a read.
 * Fastify's inject does not keep the caller's async context, so an AsyncLocalStorage would see nothing.
 * `beforeCommit` runs on the bare transaction of a counted request after its work and before its COMMIT (not noted).
 */
export function countingDb(counting: Map<string, string[]>, beforeCommit?: (tx: Tx, store: string[]) => Promise<void>) {
  const storeOf = (ctx: unknown): string[] | undefined => counting.get((ctx as { requestId?: string }).requestId ?? '');
  const textOf = (text: string | { text: string }) => (typeof text === 'string' ? text : text.text);

  /** `committed`: the transaction's last statement went with its COMMIT (`queryAndCommit`). */
  function countingTx(tx: Tx, store: string[] | undefined, committed = { done: false }): Tx {
    const note = (what: string) => store?.push(what);
    return {
      kind: tx.kind,
      organizationId: tx.organizationId,
      get orm() {
        // Drizzle bypasses the counter: a counted path must not use it unseen.
        note('orm');
        return tx.orm;
      },
      query(text, params) {
        note(textOf(text).replace(/\s+/g, ' ').trim().slice(0, 90));
        return tx.query(text, params);
      },
      exec(text) {
        note(`exec ${text.slice(0, 60)}`);
        return tx.exec(text);
      },
      // Not an exchange of its own: it goes ahead of the next one.
      queue(text, params) {
        note(`queued ${textOf(text).replace(/\s+/g, ' ').trim().slice(0, 83)}`);
        return tx.queue(text, params);
      },
      // One exchange: the statement, the ones after it and the COMMIT, noted as one entry ("… + COMMIT"). The
      // `beforeCommit` probe runs before it (the transaction ends with it).
      async queryAndCommit(text, params, then = []) {
        if (store && beforeCommit) await beforeCommit(tx, store);
        committed.done = true;
        note([textOf(text), ...then.map(([s]) => textOf(s)), 'COMMIT'].map((s) => s.replace(/\s+/g, ' ').trim().slice(0, 90)).join(' + '));
        return tx.queryAndCommit(text, params, then);
      },
    };
  }

  return (db: Database): Database => {
    // BEGIN and the tenant settings are not an exchange of their own: they travel with the transaction's first
    // statement (test/platform/round-trips.test.ts counts that on the wire), so the opening is not counted.
    const wrap = <T>(store: string[] | undefined, run: (fn: (tx: Tx) => Promise<T>) => Promise<T>, fn: (tx: Tx) => Promise<T>) =>
      run(async (tx) => {
        const committed = { done: false };
        const result = await fn(countingTx(tx, store, committed));
        if (committed.done) return result;
        if (store && beforeCommit) await beforeCommit(tx, store);
        store?.push('COMMIT');
        return result;
      });
    return {
      kind: db.kind,
      withTenant: (ctx, fn) => wrap(storeOf(ctx), (f) => db.withTenant(ctx, f), fn),
      withSystem: (fn) => db.withSystem(fn),
      withOwner: (fn) => db.withOwner(fn),
      connectionRole: () => db.connectionRole(),
      // Every statement of a read is one round trip of its own (no BEGIN, no COMMIT).
      readTenant: (ctx, fn) => db.readTenant(ctx, (tx) => fn(countingTx(tx, storeOf(ctx)))),
      tenantRead: (ctx, text, params) => {
        storeOf(ctx)?.push(`tenantRead ${textOf(text).slice(0, 60)}`);
        return db.tenantRead(ctx, text, params);
      },
      tenantWrite: (ctx, text, params) => {
        storeOf(ctx)?.push(`tenantWrite ${textOf(text).slice(0, 60)}`);
        return db.tenantWrite(ctx, text, params);
      },
      listen: (channel, cb) => db.listen(channel, cb),
      onListenerChange: (cb) => db.onListenerChange(cb),
      listenerStatus: () => db.listenerStatus(),
      close: () => db.close(),
    };
  };
}
