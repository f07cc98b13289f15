CREATE TABLE "app_build" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"app_role" text NOT NULL,
	"platform" text NOT NULL,
	"package_name" text NOT NULL,
	"version_name" text NOT NULL,
	"build_number" integer NOT NULL,
	"min_supported_build" integer NOT NULL,
	"channel" text DEFAULT 'production' NOT NULL,
	"released_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "app_build_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "app_build_uq" UNIQUE("organization_id","app_role","platform","channel","build_number")
);
--> statement-breakpoint
CREATE TABLE "sync_operation" (
	"organization_id" text NOT NULL,
	"user_id" text NOT NULL,
	"client_operation_id" text NOT NULL,
	"type" text NOT NULL,
	"request_hash" text NOT NULL,
	"status" text NOT NULL,
	"result" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sync_operation_organization_id_user_id_client_operation_id_pk" PRIMARY KEY("organization_id","user_id","client_operation_id")
);
--> statement-breakpoint
CREATE TABLE "device" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"user_id" text NOT NULL,
	"platform" text NOT NULL,
	"push_token" text NOT NULL,
	"app_role" text NOT NULL,
	"app_version" text,
	"build_number" integer,
	"device_model" text,
	"os_version" text,
	"last_seen_at" timestamp with time zone,
	"battery_level" integer,
	"charging" boolean,
	"network" text,
	"heartbeat_count" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "device_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "device_push_token_uq" UNIQUE("organization_id","push_token")
);
--> statement-breakpoint
CREATE TABLE "notification" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"user_id" text NOT NULL,
	"type" text NOT NULL,
	"title" text NOT NULL,
	"body" text NOT NULL,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"entity_type" text,
	"entity_id" text,
	"event_seq" bigint,
	"read_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "notification_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "notification_event_user_uq" UNIQUE("organization_id","user_id","event_seq")
);
--> statement-breakpoint
CREATE TABLE "push_outbox" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"notification_id" text NOT NULL,
	"device_id" text NOT NULL,
	"user_id" text NOT NULL,
	"platform" text NOT NULL,
	"push_token" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"available_at" timestamp with time zone DEFAULT now() NOT NULL,
	"claimed_at" timestamp with time zone,
	"sent_at" timestamp with time zone,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "push_outbox_organization_id_id_pk" PRIMARY KEY("organization_id","id")
);
--> statement-breakpoint
ALTER TABLE "sync_operation" ADD CONSTRAINT "sync_operation_organization_id_user_id_users_organization_id_id_fk" FOREIGN KEY ("organization_id","user_id") REFERENCES "public"."users"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device" ADD CONSTRAINT "device_organization_id_user_id_users_organization_id_id_fk" FOREIGN KEY ("organization_id","user_id") REFERENCES "public"."users"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notification" ADD CONSTRAINT "notification_organization_id_user_id_users_organization_id_id_fk" FOREIGN KEY ("organization_id","user_id") REFERENCES "public"."users"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "push_outbox" ADD CONSTRAINT "push_outbox_organization_id_notification_id_notification_organization_id_id_fk" FOREIGN KEY ("organization_id","notification_id") REFERENCES "public"."notification"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sync_operation_created_idx" ON "sync_operation" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "device_user_idx" ON "device" USING btree ("organization_id","user_id");--> statement-breakpoint
CREATE INDEX "device_seen_idx" ON "device" USING btree ("organization_id","last_seen_at");--> statement-breakpoint
CREATE INDEX "notification_user_idx" ON "notification" USING btree ("organization_id","user_id","id");--> statement-breakpoint
CREATE INDEX "notification_user_unread_idx" ON "notification" USING btree ("organization_id","user_id","id") WHERE read_at IS NULL;--> statement-breakpoint
CREATE INDEX "notification_user_updated_idx" ON "notification" USING btree ("organization_id","user_id","updated_at");--> statement-breakpoint
CREATE INDEX "push_outbox_due_idx" ON "push_outbox" USING btree ("status","available_at");--> statement-breakpoint
CREATE INDEX "push_outbox_org_status_idx" ON "push_outbox" USING btree ("organization_id","status");