CREATE TABLE "driver_cash_entry" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"driver_id" text NOT NULL,
	"entry_type" text NOT NULL,
	"amount" numeric(12, 2) NOT NULL,
	"currency" text NOT NULL,
	"order_id" text,
	"trip_id" text,
	"merchant_id" text,
	"territory_id" text,
	"expected_amount" numeric(12, 2),
	"method" text,
	"reference" text,
	"proof_storage_object_id" text,
	"settlement_id" text,
	"note" text,
	"created_by_user_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "driver_cash_entry_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "driver_cash_entry_sign_ck" CHECK ((entry_type = 'cash_collected' AND amount >= 0) OR (entry_type = 'cash_remitted' AND amount < 0) OR (entry_type = 'cash_adjustment' AND amount <> 0))
);
--> statement-breakpoint
ALTER TABLE "merchant_order" ADD COLUMN "collected_by" text;--> statement-breakpoint
ALTER TABLE "driver" ADD COLUMN "cash_limit" numeric(12, 2);--> statement-breakpoint
ALTER TABLE "logistics_settings" ADD COLUMN "cash_limit" numeric(12, 2);--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "cash_to_collect" numeric(12, 2) DEFAULT '0' NOT NULL;--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "cash_collected" numeric(12, 2);--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "cash_discrepancy_reason" text;--> statement-breakpoint
ALTER TABLE "driver_settlement" ADD COLUMN "cash_netted" numeric(12, 2) DEFAULT '0' NOT NULL;--> statement-breakpoint
ALTER TABLE "driver_settlement" ADD COLUMN "payout_amount" numeric(12, 2) DEFAULT '0' NOT NULL;--> statement-breakpoint
ALTER TABLE "driver_settlement" ADD COLUMN "driver_owes" numeric(12, 2) DEFAULT '0' NOT NULL;--> statement-breakpoint
ALTER TABLE "merchant_payment_profile" ADD COLUMN "cash_collected_by" text DEFAULT 'driver' NOT NULL;--> statement-breakpoint
ALTER TABLE "merchant_wallet_entry" ADD COLUMN "collected_by" text;--> statement-breakpoint
ALTER TABLE "driver_cash_entry" ADD CONSTRAINT "driver_cash_entry_organization_id_driver_id_driver_organization_id_id_fk" FOREIGN KEY ("organization_id","driver_id") REFERENCES "public"."driver"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "driver_cash_entry_driver_idx" ON "driver_cash_entry" USING btree ("organization_id","driver_id","created_at","id");--> statement-breakpoint
CREATE INDEX "driver_cash_entry_territory_idx" ON "driver_cash_entry" USING btree ("organization_id","territory_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "driver_cash_entry_trip_uq" ON "driver_cash_entry" USING btree ("organization_id","trip_id") WHERE entry_type = 'cash_collected';--> statement-breakpoint
ALTER TABLE "trip" ADD CONSTRAINT "trip_cash_ck" CHECK ("trip"."cash_to_collect" >= 0 and ("trip"."cash_collected" IS NULL or "trip"."cash_collected" >= 0));--> statement-breakpoint
ALTER TABLE "driver_settlement" ADD CONSTRAINT "driver_settlement_cash_ck" CHECK ("driver_settlement"."cash_netted" >= 0 AND "driver_settlement"."payout_amount" >= 0 AND "driver_settlement"."driver_owes" >= 0);