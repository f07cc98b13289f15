-- driver_location becomes partitioned by RANGE (recorded_at): one partition per UTC day (about 35 M points a
-- day at 2,000 drivers sending every 5 s, so a day is the unit that is pruned by the time-bounded reads and
-- dropped whole by retention) and a default partition for points far outside the created days.
-- A unique key must contain the partition key: a resend of a point has the same client_point_id and the same
-- recorded_at, so it is still one row.
ALTER TABLE "driver_location" RENAME TO "driver_location_old";--> statement-breakpoint
ALTER TABLE "driver_location_old" RENAME CONSTRAINT "driver_location_organization_id_driver_id_client_point_id_pk" TO "driver_location_old_pk";--> statement-breakpoint
ALTER INDEX "driver_location_time_idx" RENAME TO "driver_location_old_time_idx";--> statement-breakpoint
CREATE TABLE "driver_location" (
	"organization_id" text NOT NULL,
	"driver_id" text NOT NULL,
	"client_point_id" text NOT NULL,
	"location" "point" NOT NULL,
	"recorded_at" timestamp with time zone NOT NULL,
	"accuracy_m" double precision,
	"speed_mps" double precision,
	"heading" double precision,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "driver_location_organization_id_driver_id_client_point_id_recorded_at_pk" PRIMARY KEY("organization_id","driver_id","client_point_id","recorded_at")
) PARTITION BY RANGE ("recorded_at");--> statement-breakpoint
CREATE INDEX "driver_location_time_idx" ON "driver_location" USING btree ("organization_id","driver_id","recorded_at");--> statement-breakpoint
CREATE TABLE "driver_location_default" PARTITION OF "driver_location" DEFAULT;--> statement-breakpoint
-- The partition of one UTC day, unless it exists. Points of that day already in the default partition move into
-- it before it is attached (attaching checks the default holds none of its range). Owned by the schema owner and
-- SECURITY DEFINER, so the service's worker role creates partitions without owning tables. A partition gets the
-- tenant policy of db/tenancy.sql at once and no grant: the tenant role reads points through driver_location only.
CREATE FUNCTION "driver_location_partition_create"(day date) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $fn$
DECLARE
  part text := 'driver_location_p' || to_char(day, 'YYYYMMDD');
  lo timestamptz := day::timestamp AT TIME ZONE 'UTC';
  hi timestamptz := (day + 1)::timestamp AT TIME ZONE 'UTC';
BEGIN
  IF to_regclass(part) IS NOT NULL THEN
    RETURN false;
  END IF;
  EXECUTE format('CREATE TABLE %I (LIKE driver_location INCLUDING DEFAULTS)', part);
  -- The owner is subject to the forced tenant policy like everyone: lifted for the move only, in this transaction.
  ALTER TABLE driver_location_default NO FORCE ROW LEVEL SECURITY;
  EXECUTE format('WITH moved AS (DELETE FROM driver_location_default WHERE recorded_at >= $1 AND recorded_at < $2 RETURNING *) INSERT INTO %I SELECT * FROM moved', part)
    USING lo, hi;
  ALTER TABLE driver_location_default FORCE ROW LEVEL SECURITY;
  EXECUTE format('ALTER TABLE driver_location ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', part, lo, hi);
  EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', part);
  EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', part);
  EXECUTE format(
    'CREATE POLICY tenant_isolation ON %I USING (organization_id = current_setting(''app.organization_id'', true)) '
    'WITH CHECK (organization_id = current_setting(''app.organization_id'', true))', part);
  RETURN true;
END $fn$;--> statement-breakpoint
-- One round of upkeep: the partitions of `today` and the `ahead_days` after it exist; the days that ended more than
-- `retention_days` ago are dropped whole (and such points in the default partition deleted). Instances running it
-- at once take turns on a transaction advisory lock; returns the partitions created and dropped.
CREATE FUNCTION "driver_location_maintain"(ahead_days integer, retention_days integer, today date DEFAULT (now() AT TIME ZONE 'UTC')::date)
RETURNS TABLE (created integer, dropped integer)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $fn$
DECLARE
  cutoff date := today - retention_days;
  r record;
BEGIN
  created := 0;
  dropped := 0;
  PERFORM pg_advisory_xact_lock(7270002);
  FOR d IN 0..ahead_days LOOP
    IF driver_location_partition_create(today + d) THEN
      created := created + 1;
    END IF;
  END LOOP;
  FOR r IN
    SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'driver_location'::regclass AND c.relname ~ '^driver_location_p[0-9]{8}$'
       AND to_date(substr(c.relname, 18), 'YYYYMMDD') < cutoff
  LOOP
    EXECUTE format('DROP TABLE %I', r.relname);
    dropped := dropped + 1;
  END LOOP;
  ALTER TABLE driver_location_default NO FORCE ROW LEVEL SECURITY;
  DELETE FROM driver_location_default WHERE recorded_at < cutoff::timestamp AT TIME ZONE 'UTC';
  ALTER TABLE driver_location_default FORCE ROW LEVEL SECURITY;
  RETURN NEXT;
END $fn$;--> statement-breakpoint
REVOKE ALL ON FUNCTION "driver_location_partition_create"(date) FROM PUBLIC;--> statement-breakpoint
REVOKE ALL ON FUNCTION "driver_location_maintain"(integer, integer, date) FROM PUBLIC;--> statement-breakpoint
-- The days that already have points (within the last 90) and the next week; older points land in the default
-- partition until the retention of the worker deletes them.
SELECT "driver_location_partition_create"(d) FROM (
  SELECT DISTINCT (recorded_at AT TIME ZONE 'UTC')::date AS d FROM "driver_location_old" WHERE recorded_at >= now() - interval '90 days'
  UNION SELECT generate_series((now() AT TIME ZONE 'UTC')::date - 1, (now() AT TIME ZONE 'UTC')::date + 7, interval '1 day')::date
) days ORDER BY d;--> statement-breakpoint
-- A migration role without BYPASSRLS would read no rows through the forced tenant policy.
ALTER TABLE "driver_location_old" NO FORCE ROW LEVEL SECURITY;--> statement-breakpoint
INSERT INTO "driver_location" SELECT * FROM "driver_location_old";--> statement-breakpoint
DROP TABLE "driver_location_old";
