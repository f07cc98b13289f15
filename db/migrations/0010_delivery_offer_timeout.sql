ALTER TABLE "logistics_settings" ADD COLUMN "acceptance_timeout_enabled" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "logistics_settings" ADD COLUMN "acceptance_max_offers" integer DEFAULT 3 NOT NULL;--> statement-breakpoint
ALTER TABLE "trip_rejection" ADD COLUMN "kind" text DEFAULT 'rejected' NOT NULL;--> statement-breakpoint
-- The territory rule for every record that carries one (SPEC): trips by pickup, merchants and branches by
-- location, orders from their branch, otherwise from their trip. Run when a territory is created (and at
-- migration time with org null); only records without a territory are touched.
CREATE OR REPLACE FUNCTION logistics_backfill_territories(org text) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  n integer;
  total integer := 0;
BEGIN
  UPDATE trip t SET territory_id = s.tid, updated_at = now()
    FROM (SELECT organization_id, id, logistics_territory_for_point(organization_id, pickup_location) AS tid
            FROM trip WHERE territory_id IS NULL AND (org IS NULL OR organization_id = org)) s
   WHERE t.organization_id = s.organization_id AND t.id = s.id AND s.tid IS NOT NULL;
  GET DIAGNOSTICS n = ROW_COUNT; total := total + n;
  UPDATE merchant mm SET territory_id = s.tid, updated_at = now()
    FROM (SELECT organization_id, id, logistics_territory_for_point(organization_id, location) AS tid
            FROM merchant WHERE territory_id IS NULL AND location IS NOT NULL AND (org IS NULL OR organization_id = org)) s
   WHERE mm.organization_id = s.organization_id AND mm.id = s.id AND s.tid IS NOT NULL;
  GET DIAGNOSTICS n = ROW_COUNT; total := total + n;
  UPDATE merchant_branch b SET territory_id = s.tid, updated_at = now()
    FROM (SELECT organization_id, id, logistics_territory_for_point(organization_id, location) AS tid
            FROM merchant_branch WHERE territory_id IS NULL AND (org IS NULL OR organization_id = org)) s
   WHERE b.organization_id = s.organization_id AND b.id = s.id AND s.tid IS NOT NULL;
  GET DIAGNOSTICS n = ROW_COUNT; total := total + n;
  UPDATE merchant_order o SET territory_id = COALESCE(b.territory_id, t.territory_id), updated_at = now()
    FROM merchant_order x
    LEFT JOIN merchant_branch b ON b.organization_id = x.organization_id AND b.id = x.branch_id
    LEFT JOIN trip t ON t.organization_id = x.organization_id AND t.id = x.trip_id
   WHERE o.organization_id = x.organization_id AND o.id = x.id AND x.territory_id IS NULL AND (org IS NULL OR x.organization_id = org)
     AND COALESCE(b.territory_id, t.territory_id) IS NOT NULL;
  GET DIAGNOSTICS n = ROW_COUNT; total := total + n;
  RETURN total;
END
$$;
--> statement-breakpoint
SELECT logistics_backfill_territories(NULL);
