import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Tx } from '../../src/platform/db/index.js';
import { createTestApp, type Session, type TestApp } from '../helpers.js';

/**
 * An offline operation that fails inside the server (not a refusal: a database error) comes back as `error` with
 * nothing stored, so the app may send the same client_operation_id again, and the cause is logged for operators.
 */

/** Armed: the next statement that marks a notification read fails, as a dropped connection would. */
let failNextRead = false;
const textOf = (text: string | { text: string }) => (typeof text === 'string' ? text : text.text);

function failingTx(tx: Tx): Tx {
  return new Proxy(tx, {
    get(target, prop, receiver) {
      if (prop === 'query') {
        return (text: string | { text: string }, params?: unknown[]) => {
          if (failNextRead && /UPDATE\s+notification\b/i.test(textOf(text))) {
            failNextRead = false;
            throw new Error('connection terminated unexpectedly');
          }
          return target.query(text as string, params);
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function failingDb(db: Database): Database {
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === 'withTenant')
        return (ctx: Parameters<Database['withTenant']>[0], fn: (tx: Tx) => Promise<unknown>) =>
          target.withTenant(ctx, (tx) => fn(failingTx(tx)));
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

let t: TestApp;
let merchant: Session;
const logged: { msg: string; client_operation_id?: string; type?: string; err?: { message?: string } }[] = [];

beforeAll(async () => {
  t = await createTestApp({}, { wrapDb: failingDb });
  merchant = await t.as('merchant');
  // the request loggers are children of the app's: record what they write at error level
  const original = t.app.log.child.bind(t.app.log);
  t.app.log.child = ((bindings: object, options?: object) => {
    const child = original(bindings, options);
    const error = child.error.bind(child);
    child.error = ((obj: any, msg?: string) => {
      if (typeof obj === 'object' && msg) logged.push({ ...obj, msg, err: obj.err && { message: obj.err.message } });
      return error(obj, msg);
    }) as typeof child.error;
    return child;
  }) as typeof t.app.log.child;
});
afterAll(() => t?.close());

const sql = <R = any>(text: string, params: unknown[] = []) => t.db.withSystem(async (tx) => (await tx.query<R>(text, params)).rows);

describe('sync push: an operation that fails in the server', () => {
  it('answers error, stores nothing, logs the cause; the same id sent again is applied', async () => {
    const n = (await t.req(merchant, { method: 'POST', url: '/notifications/test' })).json();
    const op = { client_operation_id: 'fails-once-1', type: 'notification.read', payload: { notification_id: n.id } };
    failNextRead = true;
    const first = await t.req(merchant, { method: 'POST', url: '/mobile/sync/push', payload: { operations: [op] } });
    expect(first.statusCode).toBe(200);
    expect(first.json().results[0]).toMatchObject({
      client_operation_id: 'fails-once-1',
      status: 'error',
      code: 'INTERNAL_ERROR',
      replayed: false,
    });
    // the app learns nothing of the cause; the operator's log has it
    expect(first.body).not.toContain('connection terminated');
    expect(logged).toContainEqual(
      expect.objectContaining({
        msg: 'offline operation failed',
        client_operation_id: 'fails-once-1',
        type: 'notification.read',
        err: { message: 'connection terminated unexpectedly' },
      }),
    );
    expect(await sql('SELECT 1 FROM sync_operation WHERE client_operation_id = $1', ['fails-once-1'])).toHaveLength(0);
    expect((await sql('SELECT read_at FROM notification WHERE id = $1', [n.id]))[0].read_at).toBeNull();

    const again = (await t.req(merchant, { method: 'POST', url: '/mobile/sync/push', payload: { operations: [op] } })).json().results[0];
    expect(again).toMatchObject({ status: 'applied', replayed: false, data: { id: n.id, read: true } });
    expect(await sql('SELECT status FROM sync_operation WHERE client_operation_id = $1', ['fails-once-1'])).toEqual([
      { status: 'applied' },
    ]);
  });
});
