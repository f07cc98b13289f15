-- One meaning per entry type (0008) merged each express trip's platform_commission row into its delivery_fee_debit and
-- deleted it, and relabelled an express platform_commission without a delivery_fee_debit as the delivery fee. The audit
-- rows written at the time still describe the old rows (a deleted id, the driver's share as the amount, the old type):
-- history is kept as it was, and these rows say what the migration did to each entry, under the request id of 0008.
-- The merged (deleted) rows are named in the surviving row's note, "[merged with the express platform_commission <id>]".
INSERT INTO audit_log (organization_id, id, actor_user_id, action, entity_type, entity_id, before, after, request_id, created_at)
SELECT m.organization_id,
       substr(m.t, 1, 8) || '-' || substr(m.t, 9, 4) || '-7' || substr(m.r, 1, 3) || '-8' || substr(m.r, 4, 3) || '-' || substr(m.r, 7, 12),
       NULL, 'wallet.entry_merged', 'merchant_wallet_entry', m.entity_id, m.before, m.after, 'migration 0008_money_cash_backfill', now()
  FROM (
    SELECT f.organization_id, x.entity_id, x.before, x.after,
           lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0') AS t,
           md5(random()::text || x.entity_id || x.kind) AS r
      FROM merchant_wallet_entry f
     CROSS JOIN LATERAL (SELECT substring(f.note FROM '\[merged with the express platform_commission ([^\]]+)\]') AS removed_id) g
     CROSS JOIN LATERAL (
       -- The deleted platform_commission: what it was, and the row that now carries its amount.
       SELECT 'removed' AS kind, g.removed_id AS entity_id,
              jsonb_build_object('entry_type', 'platform_commission', 'trip_id', f.trip_id,
                                 'amount', (SELECT a.after->>'amount' FROM audit_log a WHERE a.organization_id = f.organization_id AND a.entity_id = g.removed_id AND a.action = 'wallet.platform_commission' ORDER BY a.id LIMIT 1)) AS before,
              jsonb_build_object('deleted', true, 'merged_into', f.id, 'reason', 'an express delivery fee is one delivery_fee_debit (the whole fee); platform_commission is only the commission on a sale') AS after
       UNION ALL
       -- The surviving delivery_fee_debit: its amount before (the driver's share) and after (the whole fee).
       SELECT 'kept', f.id,
              jsonb_build_object('amount', (SELECT a.after->>'amount' FROM audit_log a WHERE a.organization_id = f.organization_id AND a.entity_id = f.id AND a.action = 'wallet.delivery_fee_debit' ORDER BY a.id LIMIT 1)),
              jsonb_build_object('amount', f.amount::text, 'merged_from', g.removed_id)
     ) x
     WHERE f.entry_type = 'delivery_fee_debit' AND f.order_id IS NULL AND g.removed_id IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM audit_log d WHERE d.organization_id = f.organization_id AND d.entity_id = x.entity_id AND d.action = 'wallet.entry_merged')
  ) m;
--> statement-breakpoint
-- The relabelled rows (an express trip whose driver earned nothing had only the platform_commission): same id, new type.
INSERT INTO audit_log (organization_id, id, actor_user_id, action, entity_type, entity_id, before, after, request_id, created_at)
SELECT e.organization_id,
       substr(e.t, 1, 8) || '-' || substr(e.t, 9, 4) || '-7' || substr(e.r, 1, 3) || '-8' || substr(e.r, 4, 3) || '-' || substr(e.r, 7, 12),
       NULL, 'wallet.entry_reclassified', 'merchant_wallet_entry', e.id,
       jsonb_build_object('entry_type', 'platform_commission'),
       jsonb_build_object('entry_type', 'delivery_fee_debit', 'reason', 'an express delivery fee is one delivery_fee_debit (the whole fee); platform_commission is only the commission on a sale'),
       'migration 0008_money_cash_backfill', now()
  FROM (
    SELECT w.organization_id, w.id, lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0') AS t, md5(random()::text || w.id) AS r
      FROM merchant_wallet_entry w
     WHERE w.entry_type = 'delivery_fee_debit' AND w.order_id IS NULL AND w.trip_id IS NOT NULL
       AND EXISTS (SELECT 1 FROM audit_log a WHERE a.organization_id = w.organization_id AND a.entity_id = w.id AND a.action = 'wallet.platform_commission')
       AND NOT EXISTS (SELECT 1 FROM audit_log d WHERE d.organization_id = w.organization_id AND d.entity_id = w.id AND d.action = 'wallet.entry_reclassified')
  ) e;
