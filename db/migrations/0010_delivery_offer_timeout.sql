ALTER TABLE "logistics_settings" ADD COLUMN "acceptance_timeout_enabled" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "logistics_settings" ADD COLUMN "acceptance_max_offers" integer DEFAULT 3 NOT NULL;--> statement-breakpoint
ALTER TABLE "trip_rejection" ADD COLUMN "kind" text DEFAULT 'rejected' NOT NULL;