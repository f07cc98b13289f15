ALTER TABLE "driver" ADD COLUMN "capacity_weight_kg" double precision;--> statement-breakpoint
ALTER TABLE "driver" ADD COLUMN "capacity_volume_l" double precision;--> statement-breakpoint
ALTER TABLE "driver" ADD COLUMN "speed_factor" double precision;--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "pickup_after" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "pickup_before" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "units" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "weight_kg" double precision;--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "volume_l" double precision;--> statement-breakpoint
ALTER TABLE "trip" ADD COLUMN "service_min" integer;--> statement-breakpoint
ALTER TABLE "trip" ADD CONSTRAINT "trip_units_ck" CHECK ("trip"."units" between 1 and 1000);--> statement-breakpoint
ALTER TABLE "trip" ADD CONSTRAINT "trip_load_ck" CHECK (("trip"."weight_kg" IS NULL or "trip"."weight_kg" > 0) and ("trip"."volume_l" IS NULL or "trip"."volume_l" > 0));