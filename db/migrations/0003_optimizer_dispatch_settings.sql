CREATE TABLE "dispatch_settings" (
	"organization_id" text PRIMARY KEY NOT NULL,
	"objective" text DEFAULT 'time' NOT NULL,
	"max_route_duration_s" integer DEFAULT 3600 NOT NULL,
	"max_stops_per_route" integer,
	"service_time_pickup_s" integer DEFAULT 180 NOT NULL,
	"service_time_dropoff_s" integer DEFAULT 120 NOT NULL,
	"iterations" integer,
	"updated_by_user_id" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "dispatch_settings_objective_ck" CHECK ("dispatch_settings"."objective" in ('time', 'balanced', 'distance')),
	CONSTRAINT "dispatch_settings_ranges_ck" CHECK ("dispatch_settings"."max_route_duration_s" > 0 and ("dispatch_settings"."max_stops_per_route" is null or "dispatch_settings"."max_stops_per_route" >= 2) and "dispatch_settings"."service_time_pickup_s" >= 0 and "dispatch_settings"."service_time_dropoff_s" >= 0 and ("dispatch_settings"."iterations" is null or "dispatch_settings"."iterations" >= 0))
);
--> statement-breakpoint
ALTER TABLE "dispatch_settings" ADD CONSTRAINT "dispatch_settings_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;