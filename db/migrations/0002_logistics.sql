CREATE TABLE "driver" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"user_id" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"status_reason" text,
	"available" boolean DEFAULT false NOT NULL,
	"vehicle_type" text DEFAULT 'motorcycle' NOT NULL,
	"capacity" integer DEFAULT 1 NOT NULL,
	"active_trips" integer DEFAULT 0 NOT NULL,
	"last_location" "point",
	"last_location_at" timestamp with time zone,
	"last_seen_at" timestamp with time zone,
	"decided_by_user_id" text,
	"decided_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "driver_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "driver_user_uq" UNIQUE("organization_id","user_id"),
	CONSTRAINT "driver_active_trips_ck" CHECK ("driver"."active_trips" >= 0),
	CONSTRAINT "driver_capacity_ck" CHECK ("driver"."capacity" between 1 and 50)
);
--> statement-breakpoint
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
	CONSTRAINT "driver_location_organization_id_driver_id_client_point_id_pk" PRIMARY KEY("organization_id","driver_id","client_point_id")
);
--> statement-breakpoint
CREATE TABLE "driver_territory" (
	"organization_id" text NOT NULL,
	"driver_id" text NOT NULL,
	"territory_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "driver_territory_organization_id_driver_id_territory_id_pk" PRIMARY KEY("organization_id","driver_id","territory_id")
);
--> statement-breakpoint
CREATE TABLE "logistics_settings" (
	"organization_id" text PRIMARY KEY NOT NULL,
	"auto_assign_radius_m" integer DEFAULT 5000 NOT NULL,
	"acceptance_timeout_s" integer DEFAULT 120 NOT NULL,
	"assignment_strategy" text DEFAULT 'nearest' NOT NULL,
	"geofence_radius_m" integer DEFAULT 100 NOT NULL,
	"average_speed_kmh" integer DEFAULT 25 NOT NULL,
	"default_delivery_fee" numeric(12, 2) DEFAULT '15.00' NOT NULL,
	"driver_flat_fee" numeric(12, 2) DEFAULT '10.00' NOT NULL,
	"currency" text DEFAULT 'BOB' NOT NULL,
	"updated_by_user_id" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "merchant" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"owner_user_id" text NOT NULL,
	"name" text NOT NULL,
	"phone" text,
	"address" text,
	"location" "point",
	"status" text DEFAULT 'pending' NOT NULL,
	"status_reason" text,
	"commission_percent" numeric(5, 2) DEFAULT '10.00' NOT NULL,
	"territory_id" text,
	"decided_by_user_id" text,
	"decided_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "merchant_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "merchant_owner_uq" UNIQUE("organization_id","owner_user_id"),
	CONSTRAINT "merchant_commission_ck" CHECK ("merchant"."commission_percent" >= 0 and "merchant"."commission_percent" <= 100)
);
--> statement-breakpoint
CREATE TABLE "territory" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"geometry" jsonb NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"created_by_user_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "territory_organization_id_id_pk" PRIMARY KEY("organization_id","id")
);
--> statement-breakpoint
CREATE TABLE "territory_ring" (
	"organization_id" text NOT NULL,
	"territory_id" text NOT NULL,
	"part_no" integer NOT NULL,
	"ring_no" integer NOT NULL,
	"ring" "polygon" NOT NULL,
	CONSTRAINT "territory_ring_organization_id_territory_id_part_no_ring_no_pk" PRIMARY KEY("organization_id","territory_id","part_no","ring_no")
);
--> statement-breakpoint
CREATE TABLE "trip" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"service_mode" text DEFAULT 'marketplace' NOT NULL,
	"source_channel" text DEFAULT 'core' NOT NULL,
	"territory_id" text,
	"merchant_id" text,
	"customer_user_id" text,
	"order_id" text,
	"express_request_id" text,
	"driver_id" text,
	"plan_id" text,
	"stop_order" integer,
	"pickup_location" "point" NOT NULL,
	"pickup_address" text NOT NULL,
	"dropoff_location" "point" NOT NULL,
	"dropoff_address" text NOT NULL,
	"notes" text,
	"delivery_fee" numeric(12, 2) NOT NULL,
	"driver_earning" numeric(12, 2) NOT NULL,
	"currency" text DEFAULT 'BOB' NOT NULL,
	"pickup_pin" text NOT NULL,
	"delivery_pin" text NOT NULL,
	"pickup_pin_attempts" integer DEFAULT 0 NOT NULL,
	"delivery_pin_attempts" integer DEFAULT 0 NOT NULL,
	"status_reason" text,
	"created_by_user_id" text,
	"assigned_at" timestamp with time zone,
	"accepted_at" timestamp with time zone,
	"picked_up_at" timestamp with time zone,
	"in_transit_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"cancelled_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "trip_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "trip_fee_ck" CHECK ("trip"."delivery_fee" >= 0 and "trip"."driver_earning" >= 0)
);
--> statement-breakpoint
CREATE TABLE "trip_geofence" (
	"organization_id" text NOT NULL,
	"trip_id" text NOT NULL,
	"stop" text NOT NULL,
	"driver_id" text NOT NULL,
	"distance_m" double precision NOT NULL,
	"entered_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "trip_geofence_organization_id_trip_id_stop_pk" PRIMARY KEY("organization_id","trip_id","stop")
);
--> statement-breakpoint
CREATE TABLE "trip_proof" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"trip_id" text NOT NULL,
	"stage" text NOT NULL,
	"pin_verified" boolean DEFAULT true NOT NULL,
	"evidence_type" text,
	"storage_key" text,
	"driver_id" text,
	"verified_by_user_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "trip_proof_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "trip_proof_stage_uq" UNIQUE("organization_id","trip_id","stage")
);
--> statement-breakpoint
CREATE TABLE "trip_rejection" (
	"organization_id" text NOT NULL,
	"trip_id" text NOT NULL,
	"driver_id" text NOT NULL,
	"reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "trip_rejection_organization_id_trip_id_driver_id_pk" PRIMARY KEY("organization_id","trip_id","driver_id")
);
--> statement-breakpoint
ALTER TABLE "driver" ADD CONSTRAINT "driver_organization_id_user_id_users_organization_id_id_fk" FOREIGN KEY ("organization_id","user_id") REFERENCES "public"."users"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "driver_territory" ADD CONSTRAINT "driver_territory_organization_id_driver_id_driver_organization_id_id_fk" FOREIGN KEY ("organization_id","driver_id") REFERENCES "public"."driver"("organization_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "driver_territory" ADD CONSTRAINT "driver_territory_organization_id_territory_id_territory_organization_id_id_fk" FOREIGN KEY ("organization_id","territory_id") REFERENCES "public"."territory"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "logistics_settings" ADD CONSTRAINT "logistics_settings_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant" ADD CONSTRAINT "merchant_organization_id_owner_user_id_users_organization_id_id_fk" FOREIGN KEY ("organization_id","owner_user_id") REFERENCES "public"."users"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant" ADD CONSTRAINT "merchant_organization_id_territory_id_territory_organization_id_id_fk" FOREIGN KEY ("organization_id","territory_id") REFERENCES "public"."territory"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "territory" ADD CONSTRAINT "territory_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "territory_ring" ADD CONSTRAINT "territory_ring_organization_id_territory_id_territory_organization_id_id_fk" FOREIGN KEY ("organization_id","territory_id") REFERENCES "public"."territory"("organization_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trip" ADD CONSTRAINT "trip_organization_id_driver_id_driver_organization_id_id_fk" FOREIGN KEY ("organization_id","driver_id") REFERENCES "public"."driver"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trip" ADD CONSTRAINT "trip_organization_id_merchant_id_merchant_organization_id_id_fk" FOREIGN KEY ("organization_id","merchant_id") REFERENCES "public"."merchant"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trip" ADD CONSTRAINT "trip_organization_id_territory_id_territory_organization_id_id_fk" FOREIGN KEY ("organization_id","territory_id") REFERENCES "public"."territory"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trip_geofence" ADD CONSTRAINT "trip_geofence_organization_id_trip_id_trip_organization_id_id_fk" FOREIGN KEY ("organization_id","trip_id") REFERENCES "public"."trip"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trip_proof" ADD CONSTRAINT "trip_proof_organization_id_trip_id_trip_organization_id_id_fk" FOREIGN KEY ("organization_id","trip_id") REFERENCES "public"."trip"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trip_rejection" ADD CONSTRAINT "trip_rejection_organization_id_trip_id_trip_organization_id_id_fk" FOREIGN KEY ("organization_id","trip_id") REFERENCES "public"."trip"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "driver_status_idx" ON "driver" USING btree ("organization_id","status","id");--> statement-breakpoint
CREATE INDEX "driver_location_gist" ON "driver" USING gist ("last_location");--> statement-breakpoint
CREATE INDEX "driver_location_time_idx" ON "driver_location" USING btree ("organization_id","driver_id","recorded_at");--> statement-breakpoint
CREATE INDEX "driver_territory_territory_idx" ON "driver_territory" USING btree ("organization_id","territory_id");--> statement-breakpoint
CREATE INDEX "merchant_status_idx" ON "merchant" USING btree ("organization_id","status","id");--> statement-breakpoint
CREATE INDEX "merchant_territory_idx" ON "merchant" USING btree ("organization_id","territory_id","id");--> statement-breakpoint
CREATE INDEX "territory_active_idx" ON "territory" USING btree ("organization_id","active","created_at");--> statement-breakpoint
CREATE INDEX "territory_ring_gist" ON "territory_ring" USING gist ("ring");--> statement-breakpoint
CREATE INDEX "trip_status_idx" ON "trip" USING btree ("organization_id","status","id");--> statement-breakpoint
CREATE INDEX "trip_driver_idx" ON "trip" USING btree ("organization_id","driver_id","id");--> statement-breakpoint
CREATE INDEX "trip_territory_idx" ON "trip" USING btree ("organization_id","territory_id","id");--> statement-breakpoint
CREATE INDEX "trip_merchant_idx" ON "trip" USING btree ("organization_id","merchant_id","id");--> statement-breakpoint
CREATE INDEX "trip_customer_idx" ON "trip" USING btree ("organization_id","customer_user_id","id");--> statement-breakpoint
CREATE INDEX "trip_created_idx" ON "trip" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "trip_pickup_gist" ON "trip" USING gist ("pickup_location");--> statement-breakpoint
CREATE UNIQUE INDEX "trip_order_uq" ON "trip" USING btree ("organization_id","order_id") WHERE order_id IS NOT NULL AND status <> 'cancelled';--> statement-breakpoint
CREATE UNIQUE INDEX "trip_express_uq" ON "trip" USING btree ("organization_id","express_request_id") WHERE express_request_id IS NOT NULL AND status <> 'cancelled';