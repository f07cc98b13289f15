CREATE TABLE "gps_device" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"driver_id" text NOT NULL,
	"device_identifier" text NOT NULL,
	"token_hash" text NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "gps_device_organization_id_id_pk" PRIMARY KEY("organization_id","id")
);
--> statement-breakpoint
ALTER TABLE "gps_device" ADD CONSTRAINT "gps_device_organization_id_driver_id_driver_organization_id_id_fk" FOREIGN KEY ("organization_id","driver_id") REFERENCES "public"."driver"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "gps_device_id_idx" ON "gps_device" USING btree ("id");--> statement-breakpoint
CREATE UNIQUE INDEX "gps_device_live_uq" ON "gps_device" USING btree ("organization_id","device_identifier") WHERE revoked_at IS NULL;