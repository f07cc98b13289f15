CREATE TABLE "trip_track" (
	"organization_id" text NOT NULL,
	"trip_id" text NOT NULL,
	"driver_id" text NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone NOT NULL,
	"lons" double precision[] NOT NULL,
	"lats" double precision[] NOT NULL,
	"recorded_at" timestamp with time zone[] NOT NULL,
	"speeds_mps" double precision[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "trip_track_organization_id_trip_id_pk" PRIMARY KEY("organization_id","trip_id")
);
--> statement-breakpoint
ALTER TABLE "trip_track" ADD CONSTRAINT "trip_track_organization_id_trip_id_trip_organization_id_id_fk" FOREIGN KEY ("organization_id","trip_id") REFERENCES "public"."trip"("organization_id","id") ON DELETE no action ON UPDATE no action;