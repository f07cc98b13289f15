ALTER TABLE "catalog_item" ADD COLUMN "changed_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
ALTER TABLE "customer_address" ADD COLUMN "changed_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
ALTER TABLE "merchant_order" ADD COLUMN "changed_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "changed_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
ALTER TABLE "device" ADD COLUMN "changed_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
ALTER TABLE "notification" ADD COLUMN "changed_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
CREATE INDEX "catalog_item_merchant_sync_idx" ON "catalog_item" USING btree ("organization_id","merchant_id","changed_xid");--> statement-breakpoint
CREATE INDEX "customer_address_user_sync_idx" ON "customer_address" USING btree ("organization_id","user_id","changed_xid");--> statement-breakpoint
CREATE INDEX "merchant_order_merchant_sync_idx" ON "merchant_order" USING btree ("organization_id","merchant_id","changed_xid");--> statement-breakpoint
CREATE INDEX "merchant_order_customer_sync_idx" ON "merchant_order" USING btree ("organization_id","customer_user_id","changed_xid");--> statement-breakpoint
CREATE INDEX "trip_driver_sync_idx" ON "trip" USING btree ("organization_id","driver_id","changed_xid");--> statement-breakpoint
CREATE INDEX "device_user_sync_idx" ON "device" USING btree ("organization_id","user_id","changed_xid");--> statement-breakpoint
CREATE INDEX "notification_user_sync_idx" ON "notification" USING btree ("organization_id","user_id","changed_xid");--> statement-breakpoint
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
