ALTER TABLE "catalog_item" ADD COLUMN "changed_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
ALTER TABLE "customer_address" ADD COLUMN "changed_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
ALTER TABLE "merchant_order" ADD COLUMN "changed_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "changed_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
ALTER TABLE "device" ADD COLUMN "changed_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
ALTER TABLE "notification" ADD COLUMN "changed_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
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
