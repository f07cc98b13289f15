import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, sleep, type Session, type TestApp } from '../helpers.js';
import { newShop, ok, type Shop } from '../commerce/fixtures.js';

/**
 * Offline sync in commit order: a pull returns every change committed since the previous cursor exactly once,
 * however long its transaction ran. MARGIN_MS is the margin a wall-clock watermark ("now minus a margin", which
 * the server does not use) would need: such a watermark loses a transaction open longer than the margin and sends
 * changes near the watermark twice, and these tests fail on it. SYNC_ENTITY_LIMIT 2 makes every round page through `has_more`.
 */
let t: TestApp;
let shop: Shop;
const MARGIN_MS = 1000;

beforeAll(async () => {
  t = await createTestApp({ raw: { SYNC_WATERMARK_MARGIN_MS: String(MARGIN_MS), SYNC_ENTITY_LIMIT: '2' } });
  shop = await newShop(t, ['1.00', '2.00', '3.00', '4.00']);
});
afterAll(() => t?.close());

type Item = { id: string; price: string };
type Page = { cursor: string; has_more: boolean; entities: Record<string, { changed: Item[]; deleted: { id: string }[] }> };

const pullPage = async (s: Session, cursor: string | null): Promise<Page> =>
  ok(await t.req(s, { method: 'GET', url: `/mobile/sync/pull${cursor ? `?cursor=${cursor}` : ''}` }));

/** One round: pages until has_more is false; the catalog items received, in order, and the next cursor. */
async function pullRound(s: Session, cursor: string | null): Promise<{ items: Item[]; cursor: string; pages: number }> {
  const items: Item[] = [];
  let pages = 0;
  for (;;) {
    const p = await pullPage(s, cursor);
    pages++;
    items.push(...p.entities.catalog_items.changed);
    cursor = p.cursor;
    if (!p.has_more) return { items, cursor, pages };
    if (pages > 50) throw new Error('has_more never ends');
  }
}

const setPrice = async (itemId: string, price: string) =>
  ok(await t.req(shop.merchant, { method: 'PATCH', url: `/merchant/catalog/${itemId}`, payload: { price } }));

describe('offline sync pulls in commit order', () => {
  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'a change whose transaction stays open longer than the old margin comes in the first pull after its commit, once',
    async () => {
      // Older changes out of the margin, so that only the two changes below are near any watermark. Time itself is
      // what this test is about (a change older, a transaction longer than the margin): no event marks it.
      await sleep(MARGIN_MS);
      let cursor = (await pullRound(shop.merchant, null)).cursor;
      const [slow, quick] = shop.items;
      // A second connection writes the item in a transaction that stays open (updated_at = its start time).
      const other = new pg.Client({ connectionString: t.url! });
      await other.connect();
      try {
        await other.query('BEGIN');
        await other.query(`UPDATE catalog_item SET price = 9.99, updated_at = now() WHERE id = $1`, [slow.id]);
        // Open longer than the margin: elapsed time is the condition.
        await sleep(MARGIN_MS + 500);
        // Meanwhile another change commits, and the app pulls: it gets that one, not the open one.
        await setPrice(quick.id, '7.50');
        const during = await pullRound(shop.merchant, cursor);
        expect(during.items.map((i) => i.id)).toEqual([quick.id]);
        cursor = during.cursor;
        await other.query('COMMIT');
      } finally {
        await other.end();
      }
      const after = await pullRound(shop.merchant, cursor);
      expect(after.items).toEqual([expect.objectContaining({ id: slow.id, price: '9.99' })]);
      // And never again.
      expect((await pullRound(shop.merchant, after.cursor)).items).toEqual([]);
    },
  );

  it('repeated pulls with no changes return nothing (no re-sends near the cursor)', async () => {
    const { cursor: c0 } = await pullRound(shop.merchant, null);
    await setPrice(shop.items[2].id, '3.25');
    const r1 = await pullRound(shop.merchant, c0);
    expect(r1.items).toEqual([expect.objectContaining({ id: shop.items[2].id, price: '3.25' })]);
    let cursor = r1.cursor;
    for (let i = 0; i < 3; i++) {
      const page = await pullPage(shop.merchant, cursor);
      expect(page.has_more).toBe(false);
      for (const [entity, changes] of Object.entries(page.entities))
        expect({ entity, ...changes }).toEqual({ entity, changed: [], deleted: [] });
      cursor = page.cursor;
    }
    // Pulling again with an older cursor is a retry: it gets the same change again (the client lost the answer).
    expect((await pullRound(shop.merchant, c0)).items.map((i) => i.id)).toEqual([shop.items[2].id]);
  });

  it('every change of a random interleaving of updates and pulls is received exactly once, in its latest state', async () => {
    let cursor = (await pullRound(shop.merchant, null)).cursor;
    const Op = fc.oneof(
      fc.record({
        kind: fc.constant('update' as const),
        item: fc.nat({ max: shop.items.length - 1 }),
        cents: fc.integer({ min: 1, max: 99_999 }),
      }),
      fc.constant({ kind: 'pull' as const }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(Op, { minLength: 1, maxLength: 10 }), async (ops) => {
        // What the client must receive at its next pull: each changed item once, with its latest price.
        const pending = new Map<string, string>();
        const check = async () => {
          const round = await pullRound(shop.merchant, cursor);
          cursor = round.cursor;
          const got = round.items.map((i) => i.id);
          expect(new Set(got).size).toBe(got.length);
          expect(Object.fromEntries(round.items.map((i) => [i.id, i.price]))).toEqual(Object.fromEntries(pending));
          pending.clear();
        };
        for (const op of ops) {
          if (op.kind === 'pull') {
            await check();
          } else {
            const price = (op.cents / 100).toFixed(2);
            await setPrice(shop.items[op.item].id, price);
            pending.set(shop.items[op.item].id, price);
          }
        }
        await check();
      }),
      { numRuns: 20 },
    );
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'with transactions held open across pulls and committed in any order, every change is still received exactly once',
    async () => {
      let cursor = (await pullRound(shop.merchant, null)).cursor;
      const conns = [new pg.Client({ connectionString: t.url! }), new pg.Client({ connectionString: t.url! })];
      for (const c of conns) await c.connect();
      const Op = fc.oneof(
        fc.record({
          kind: fc.constant('update' as const),
          item: fc.nat({ max: shop.items.length - 1 }),
          cents: fc.integer({ min: 1, max: 99_999 }),
        }),
        fc.record({
          kind: fc.constant('open' as const),
          conn: fc.nat({ max: conns.length - 1 }),
          item: fc.nat({ max: shop.items.length - 1 }),
          cents: fc.integer({ min: 1, max: 99_999 }),
        }),
        fc.record({ kind: fc.constant('commit' as const), conn: fc.nat({ max: conns.length - 1 }) }),
        fc.constant({ kind: 'pull' as const }),
      );
      try {
        await fc.assert(
          fc.asyncProperty(fc.array(Op, { minLength: 1, maxLength: 14 }), async (ops) => {
            const pending = new Map<string, string>();
            // Open transactions: connection → the item it holds (locked) and the price it will commit.
            const open = new Map<number, { id: string; price: string }>();
            const locked = (id: string) => [...open.values()].some((o) => o.id === id);
            const commit = async (conn: number) => {
              const o = open.get(conn);
              if (!o) return;
              await conns[conn].query('COMMIT');
              open.delete(conn);
              pending.set(o.id, o.price);
            };
            const check = async () => {
              const round = await pullRound(shop.merchant, cursor);
              cursor = round.cursor;
              const got = round.items.map((i) => i.id);
              expect(new Set(got).size).toBe(got.length);
              expect(Object.fromEntries(round.items.map((i) => [i.id, i.price]))).toEqual(Object.fromEntries(pending));
              pending.clear();
            };
            for (const op of ops) {
              if (op.kind === 'pull') await check();
              else if (op.kind === 'commit') await commit(op.conn);
              else {
                const id = shop.items[op.item].id;
                const price = (op.cents / 100).toFixed(2);
                if (locked(id)) continue; // would wait for the open transaction
                if (op.kind === 'update') {
                  await setPrice(id, price);
                  pending.set(id, price);
                } else if (!open.has(op.conn)) {
                  await conns[op.conn].query('BEGIN');
                  await conns[op.conn].query('UPDATE catalog_item SET price = $2, updated_at = now() WHERE id = $1', [id, price]);
                  open.set(op.conn, { id, price });
                }
              }
            }
            for (const conn of [...open.keys()]) await commit(conn);
            await check();
          }),
          { numRuns: 25 },
        );
      } finally {
        for (const c of conns) await c.end();
      }
    },
  );

  it('paging: a round larger than the limit comes in several pages, every row once', async () => {
    const { cursor: c0 } = await pullRound(shop.merchant, null);
    for (const [i, item] of shop.items.entries()) await setPrice(item.id, `${i + 10}.00`);
    const round = await pullRound(shop.merchant, c0);
    expect(round.pages).toBeGreaterThan(1);
    expect(round.items.map((i) => i.id).sort()).toEqual(shop.items.map((i) => i.id).sort());
    // A change committed while the round is paged is not lost: it comes in the next round.
    const first = await pullPage(shop.merchant, c0);
    expect(first.has_more).toBe(true);
    await setPrice(shop.items[0].id, '99.00');
    let rest = await pullRound(shop.merchant, first.cursor);
    expect([...first.entities.catalog_items.changed, ...rest.items].map((i) => i.id).sort()).toEqual(shop.items.map((i) => i.id).sort());
    rest = await pullRound(shop.merchant, rest.cursor);
    expect(rest.items).toEqual([expect.objectContaining({ id: shop.items[0].id, price: '99.00' })]);
  });
});
