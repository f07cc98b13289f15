CREATE TABLE "trip_recipient_link" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"trip_id" text NOT NULL,
	"recipient_phone" text,
	"created_by_user_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "trip_recipient_link_organization_id_id_pk" PRIMARY KEY("organization_id","id")
);
--> statement-breakpoint
ALTER TABLE "trip_recipient_link" ADD CONSTRAINT "trip_recipient_link_organization_id_trip_id_trip_organization_id_id_fk" FOREIGN KEY ("organization_id","trip_id") REFERENCES "public"."trip"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "trip_recipient_link_live_uq" ON "trip_recipient_link" USING btree ("organization_id","trip_id") WHERE revoked_at IS NULL;