CREATE TABLE "chat_order_outbox" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"territory_id" text,
	"merchant_id" text NOT NULL,
	"order_id" text,
	"express_request_id" text,
	"destination_phone" text NOT NULL,
	"message_type" text DEFAULT 'order_created' NOT NULL,
	"payload" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"available_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_error" text,
	"sent_at" timestamp with time zone,
	"claim_token" text,
	"claim_expires_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "chat_order_outbox_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "chat_order_outbox_status_ck" CHECK (status IN ('pending', 'sending', 'sent', 'failed', 'cancelled')),
	CONSTRAINT "chat_order_outbox_attempts_ck" CHECK (attempts >= 0)
);
--> statement-breakpoint
CREATE TABLE "merchant_channel_settings" (
	"organization_id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"chat_enabled" boolean DEFAULT false NOT NULL,
	"chat_mode" text DEFAULT 'link' NOT NULL,
	"chat_phone" text,
	"chat_phone_number_id" text,
	"chat_account_id" text,
	"chat_secret_ref" text,
	"order_notifications" boolean DEFAULT true NOT NULL,
	"status_notifications" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "merchant_channel_settings_organization_id_merchant_id_pk" PRIMARY KEY("organization_id","merchant_id"),
	CONSTRAINT "merchant_channel_settings_mode_ck" CHECK (chat_mode IN ('link', 'cloud_api'))
);
--> statement-breakpoint
CREATE TABLE "integration_webhook_event" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"connector" text NOT NULL,
	"event_id" text NOT NULL,
	"event_type" text,
	"payload" jsonb NOT NULL,
	"body_sha256" text NOT NULL,
	"signed_at" timestamp with time zone NOT NULL,
	"status" text DEFAULT 'ignored' NOT NULL,
	"status_reason" text,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "integration_webhook_event_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "integration_webhook_event_dedup" UNIQUE("organization_id","connector","event_id")
);
--> statement-breakpoint
ALTER TABLE "chat_order_outbox" ADD CONSTRAINT "chat_order_outbox_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant_channel_settings" ADD CONSTRAINT "merchant_channel_settings_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "integration_webhook_event" ADD CONSTRAINT "integration_webhook_event_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "chat_order_outbox_merchant_idx" ON "chat_order_outbox" USING btree ("organization_id","merchant_id","id");--> statement-breakpoint
CREATE INDEX "chat_order_outbox_order_idx" ON "chat_order_outbox" USING btree ("organization_id","order_id");--> statement-breakpoint
CREATE INDEX "chat_order_outbox_express_idx" ON "chat_order_outbox" USING btree ("organization_id","express_request_id");--> statement-breakpoint
CREATE INDEX "chat_order_outbox_due_idx" ON "chat_order_outbox" USING btree ("available_at") WHERE status IN ('pending', 'sending');--> statement-breakpoint
CREATE UNIQUE INDEX "chat_order_outbox_order_created_uq" ON "chat_order_outbox" USING btree ("organization_id","order_id") WHERE message_type = 'order_created' AND order_id IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "chat_order_outbox_express_created_uq" ON "chat_order_outbox" USING btree ("organization_id","express_request_id") WHERE message_type = 'order_created' AND express_request_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "integration_webhook_event_received_idx" ON "integration_webhook_event" USING btree ("organization_id","received_at");