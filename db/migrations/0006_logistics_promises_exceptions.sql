ALTER TABLE "checkout_quote" ADD COLUMN "promised_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "checkout_quote" ADD COLUMN "deliver_after" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "checkout_quote" ADD COLUMN "deliver_before" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "merchant_branch" ADD COLUMN "preparation_min" integer DEFAULT 15 NOT NULL;--> statement-breakpoint
ALTER TABLE "merchant_order" ADD COLUMN "promised_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "merchant_order" ADD COLUMN "deliver_after" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "merchant_order" ADD COLUMN "deliver_before" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "driver" ADD COLUMN "location_stale_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "logistics_settings" ADD COLUMN "dispatch_buffer_min" integer DEFAULT 10 NOT NULL;--> statement-breakpoint
ALTER TABLE "logistics_settings" ADD COLUMN "delay_grace_min" integer DEFAULT 5 NOT NULL;--> statement-breakpoint
ALTER TABLE "logistics_settings" ADD COLUMN "location_stale_after_s" integer DEFAULT 300 NOT NULL;--> statement-breakpoint
ALTER TABLE "logistics_settings" ADD COLUMN "rejections_alert_threshold" integer DEFAULT 2 NOT NULL;--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "promised_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "deliver_after" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "deliver_before" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "eta_pickup_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "eta_dropoff_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "eta_updated_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "delayed_at" timestamp with time zone;