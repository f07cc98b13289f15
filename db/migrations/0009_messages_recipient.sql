CREATE TABLE "recipient_message" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"subject_id" text NOT NULL,
	"kind" text NOT NULL,
	"channel" text NOT NULL,
	"language" text NOT NULL,
	"destination" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "recipient_message_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "recipient_message_channel_ck" CHECK (channel IN ('chat', 'push'))
);
--> statement-breakpoint
CREATE TABLE "recipient_message_settings" (
	"organization_id" text NOT NULL,
	"arriving_soon_min" integer DEFAULT 10 NOT NULL,
	"eta_message_period_min" integer DEFAULT 30 NOT NULL,
	"default_language" text DEFAULT 'es' NOT NULL,
	"templates" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "recipient_message_settings_organization_id_pk" PRIMARY KEY("organization_id"),
	CONSTRAINT "recipient_message_settings_language_ck" CHECK (default_language IN ('es', 'en')),
	CONSTRAINT "recipient_message_settings_minutes_ck" CHECK (arriving_soon_min BETWEEN 1 AND 240 AND eta_message_period_min BETWEEN 1 AND 1440)
);
--> statement-breakpoint
CREATE TABLE "recipient_preference" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"phone" text NOT NULL,
	"language" text,
	"opted_out_at" timestamp with time zone,
	"changed_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "recipient_preference_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "recipient_preference_language_ck" CHECK (language IS NULL OR language IN ('es', 'en')),
	CONSTRAINT "recipient_preference_changed_by_ck" CHECK (changed_by IN ('staff', 'recipient'))
);
--> statement-breakpoint
ALTER TABLE "trip_recipient_link" ADD COLUMN "recipient_name" text;--> statement-breakpoint
ALTER TABLE "recipient_message" ADD CONSTRAINT "recipient_message_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "recipient_message_settings" ADD CONSTRAINT "recipient_message_settings_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "recipient_preference" ADD CONSTRAINT "recipient_preference_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "recipient_message_once_uq" ON "recipient_message" USING btree ("organization_id","subject_id","kind","channel") WHERE kind <> 'arriving_soon';--> statement-breakpoint
CREATE INDEX "recipient_message_subject_idx" ON "recipient_message" USING btree ("organization_id","subject_id","kind","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "recipient_preference_phone_uq" ON "recipient_preference" USING btree ("organization_id","phone");