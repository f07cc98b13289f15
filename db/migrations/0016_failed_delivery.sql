ALTER TABLE "logistics_settings" ADD COLUMN "failed_delivery_policy" text DEFAULT 'return_to_merchant' NOT NULL;--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "failed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "returned_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "failure_reason" text;--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "failure_note" text;