import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/platform/ids.js';
import { createTestApp, type TestApp } from '../helpers.js';
import { newMerchant, orderKit } from './fixtures.js';

/**
 * The reclassification of express rows (migration 0008: each express trip's platform_commission merged into its
 * delivery_fee_debit and deleted, or relabelled when it was alone) keeps its history explained: the audit rows written at
 * the time stay as they were, and the audit migration after it appends what happened to each entry (the deleted id and the
 * row that carries its amount, the relabelled type), once. Replayed here on rows in the old shape.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
}, 60_000);
afterAll(() => t?.close());

const DIR = path.resolve(import.meta.dirname, '../../db/migrations');
const statements = (suffix: string) => {
  const file = readdirSync(DIR).find((f) => f.endsWith(suffix))!;
  return readFileSync(path.join(DIR, file), 'utf8')
    .split('--> statement-breakpoint')
    .map((s) => s.trim())
    .filter(Boolean);
};
const run = (sqls: string[]) =>
  t.db.withSystem(async (tx) => {
    for (const s of sqls) await tx.query(s);
  });
const q = async (sql: string, params: unknown[] = []) => (await t.db.withSystem((tx) => tx.query(sql, params))).rows;

describe('express rows merged by the entry-type migration', () => {
  it('keep their audit history and gain an audit row saying what became of each (deleted into which row, relabelled), written once', async () => {
    const kit = await orderKit(t);
    const shop = await newMerchant(t, kit.admin);
    const [{ organization_id: org }] = await q('SELECT organization_id FROM merchant WHERE id = $1', [shop.id]);
    const [fee, commission, alone, tripMerged, tripAlone] = [newId(), newId(), newId(), newId(), newId()];
    // The old shape: an express trip's fee split in the driver's share (delivery_fee_debit) and the rest (platform_commission);
    // a trip whose driver earned nothing had only the platform_commission. Each with the audit row appendEntry wrote.
    const entry = (id: string, type: string, amount: string, trip: string) =>
      q(
        `INSERT INTO merchant_wallet_entry (organization_id, id, merchant_id, trip_id, entry_type, amount, currency, note) VALUES ($1, $2, $3, $4, $5, $6, 'BOB', 'express')`,
        [org, id, shop.id, trip, type, amount],
      );
    const audit = (id: string, type: string, amount: string) =>
      q(
        `INSERT INTO audit_log (organization_id, id, action, entity_type, entity_id, after) VALUES ($1, $2, $3, 'merchant_wallet_entry', $4, $5)`,
        [org, newId(), `wallet.${type}`, id, JSON.stringify({ amount, merchant_id: shop.id })],
      );
    await entry(fee, 'delivery_fee_debit', '-3.00', tripMerged);
    await audit(fee, 'delivery_fee_debit', '-3.00');
    await entry(commission, 'platform_commission', '-2.00', tripMerged);
    await audit(commission, 'platform_commission', '-2.00');
    await entry(alone, 'platform_commission', '-4.00', tripAlone);
    await audit(alone, 'platform_commission', '-4.00');
    const before = await q(`SELECT id, action, entity_id, after FROM audit_log WHERE entity_id = ANY($1) ORDER BY id`, [
      [fee, commission, alone],
    ]);

    await run(statements('_money_cash_backfill.sql'));
    expect(
      await q(`SELECT id, entry_type, amount::text FROM merchant_wallet_entry WHERE id = ANY($1) ORDER BY merchant_wallet_entry.amount`, [
        [fee, commission, alone],
      ]),
    ).toEqual([
      { id: fee, entry_type: 'delivery_fee_debit', amount: '-5.00' },
      { id: alone, entry_type: 'delivery_fee_debit', amount: '-4.00' },
    ]);
    await run(statements('_money_reclassification_audit.sql'));
    await run(statements('_money_reclassification_audit.sql')); // a second run adds nothing

    // History as it was...
    const now = await q(
      `SELECT id, action, entity_id, after FROM audit_log WHERE entity_id = ANY($1) AND request_id IS DISTINCT FROM 'migration 0008_money_cash_backfill' ORDER BY id`,
      [[fee, commission, alone]],
    );
    expect(now).toEqual(before);
    // ...and what the migration did, one row per entry.
    const added = await q(
      `SELECT action, entity_id, before, after, actor_user_id FROM audit_log WHERE request_id = 'migration 0008_money_cash_backfill' AND entity_id = ANY($1) ORDER BY entity_id`,
      [[fee, commission, alone]],
    );
    expect(added).toHaveLength(3);
    const of = (id: string) => added.find((a) => a.entity_id === id);
    expect(of(commission)).toMatchObject({
      action: 'wallet.entry_merged',
      actor_user_id: null,
      before: { entry_type: 'platform_commission', amount: '-2.00', trip_id: tripMerged },
      after: { deleted: true, merged_into: fee },
    });
    expect(of(fee)).toMatchObject({
      action: 'wallet.entry_merged',
      before: { amount: '-3.00' },
      after: { amount: '-5.00', merged_from: commission },
    });
    expect(of(alone)).toMatchObject({
      action: 'wallet.entry_reclassified',
      before: { entry_type: 'platform_commission' },
      after: { entry_type: 'delivery_fee_debit' },
    });
    // Their ids sort like the platform's (UUIDv7 shape).
    for (const r of await q(`SELECT id FROM audit_log WHERE request_id = 'migration 0008_money_cash_backfill'`))
      expect(r.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
