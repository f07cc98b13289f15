-- What the Drizzle tables cannot express: the territory rule, the territory backfill, leakproof geometric
-- operators (so GiST indexes work under row-level security) and the offline-sync change stamp.
-- Logistics: the territory rule as SQL, self-contained (the tables come from the baseline).
-- "The oldest active territory whose polygon covers the point": rings with ring_no 0 are outer rings,
-- higher ring numbers of the same part are holes. `&&` lets the GiST index on territory_ring.ring prefilter.
CREATE OR REPLACE FUNCTION logistics_territory_for_point(org text, p point) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT t.id
    FROM territory t
   WHERE t.organization_id = org
     AND t.active
     AND EXISTS (
       SELECT 1 FROM territory_ring o
        WHERE o.organization_id = t.organization_id AND o.territory_id = t.id AND o.ring_no = 0
          AND o.ring && polygon(box(p, p)) AND o.ring @> p
          AND NOT EXISTS (
            SELECT 1 FROM territory_ring h
             WHERE h.organization_id = o.organization_id AND h.territory_id = o.territory_id
               AND h.part_no = o.part_no AND h.ring_no > 0 AND h.ring @> p))
   ORDER BY t.created_at, t.id
   LIMIT 1
$$;
--> statement-breakpoint
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
-- Row-level security only lets an index condition run before the tenant policy when its operator is
-- LEAKPROOF; the geometric operators are not marked so, which turns every `point <@ box` / `<->` /
-- `polygon @> point` on a tenant table into a sequential scan. These functions are pure arithmetic on
-- fixed-shape values and raise no data-dependent errors, so marking them is safe. It needs a superuser
-- (the embedded database and the usual migration role); without one the queries stay correct, only slower.
DO $$
BEGIN
  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    ALTER FUNCTION on_pb(point, box) LEAKPROOF;
    ALTER FUNCTION box_contain_pt(box, point) LEAKPROOF;
    ALTER FUNCTION point_distance(point, point) LEAKPROOF;
    ALTER FUNCTION pt_contained_poly(point, polygon) LEAKPROOF;
    ALTER FUNCTION poly_contain_pt(polygon, point) LEAKPROOF;
    ALTER FUNCTION poly_overlap(polygon, polygon) LEAKPROOF;
  ELSE
    RAISE NOTICE 'logistics: not a superuser, geometric operators stay non-leakproof (GiST indexes unused under RLS)';
  END IF;
END $$;
--> statement-breakpoint
-- Offline sync (src/modules/mobile/sync.ts): every write of a synced row records its top-level transaction id,
-- whatever the statement sets; pulls compare it with snapshots, so a change is pulled once its transaction commits.
CREATE OR REPLACE FUNCTION sync_touch_changed_xid() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.changed_xid := pg_current_xact_id();
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER catalog_item_changed_xid BEFORE INSERT OR UPDATE ON catalog_item FOR EACH ROW EXECUTE FUNCTION sync_touch_changed_xid();--> statement-breakpoint
CREATE TRIGGER customer_address_changed_xid BEFORE INSERT OR UPDATE ON customer_address FOR EACH ROW EXECUTE FUNCTION sync_touch_changed_xid();--> statement-breakpoint
CREATE TRIGGER merchant_order_changed_xid BEFORE INSERT OR UPDATE ON merchant_order FOR EACH ROW EXECUTE FUNCTION sync_touch_changed_xid();--> statement-breakpoint
CREATE TRIGGER trip_changed_xid BEFORE INSERT OR UPDATE ON trip FOR EACH ROW EXECUTE FUNCTION sync_touch_changed_xid();--> statement-breakpoint
CREATE TRIGGER device_changed_xid BEFORE INSERT OR UPDATE ON device FOR EACH ROW EXECUTE FUNCTION sync_touch_changed_xid();--> statement-breakpoint
CREATE TRIGGER notification_changed_xid BEFORE INSERT OR UPDATE ON notification FOR EACH ROW EXECUTE FUNCTION sync_touch_changed_xid();
