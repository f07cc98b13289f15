CREATE TABLE "webhook_attempt" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"delivery_id" text NOT NULL,
	"subscription_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"url" text NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"duration_ms" integer NOT NULL,
	"status_code" integer,
	"error" text,
	"response_excerpt" text,
	"outcome" text NOT NULL,
	CONSTRAINT "webhook_attempt_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "webhook_attempt_outcome_ck" CHECK (outcome IN ('delivered', 'retry', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "webhook_delivery" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"subscription_id" text NOT NULL,
	"event_id" text NOT NULL,
	"event_seq" bigint,
	"event_type" text NOT NULL,
	"resource_key" text,
	"body" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"claim_token" text,
	"claim_expires_at" timestamp with time zone,
	"last_status_code" integer,
	"last_error" text,
	"delivered_at" timestamp with time zone,
	"redelivery_of" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "webhook_delivery_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "webhook_delivery_status_ck" CHECK (status IN ('pending', 'sending', 'delivered', 'failed', 'cancelled'))
);
--> statement-breakpoint
CREATE TABLE "webhook_subscription" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"scope" text NOT NULL,
	"owner_user_id" text NOT NULL,
	"merchant_id" text,
	"url" text NOT NULL,
	"description" text,
	"event_types" text[] NOT NULL,
	"secret" text NOT NULL,
	"previous_secret" text,
	"previous_secret_expires_at" timestamp with time zone,
	"active" boolean DEFAULT true NOT NULL,
	"failing_since" timestamp with time zone,
	"disabled_at" timestamp with time zone,
	"disabled_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "webhook_subscription_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "webhook_subscription_scope_ck" CHECK (scope IN ('organization', 'merchant')),
	CONSTRAINT "webhook_subscription_merchant_ck" CHECK ((scope = 'merchant') = (merchant_id IS NOT NULL))
);
--> statement-breakpoint
ALTER TABLE "webhook_attempt" ADD CONSTRAINT "webhook_attempt_organization_id_delivery_id_webhook_delivery_organization_id_id_fk" FOREIGN KEY ("organization_id","delivery_id") REFERENCES "public"."webhook_delivery"("organization_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_delivery" ADD CONSTRAINT "webhook_delivery_organization_id_subscription_id_webhook_subscription_organization_id_id_fk" FOREIGN KEY ("organization_id","subscription_id") REFERENCES "public"."webhook_subscription"("organization_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_subscription" ADD CONSTRAINT "webhook_subscription_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_attempt_delivery_idx" ON "webhook_attempt" USING btree ("organization_id","delivery_id","attempt");--> statement-breakpoint
CREATE INDEX "webhook_delivery_subscription_idx" ON "webhook_delivery" USING btree ("organization_id","subscription_id","id");--> statement-breakpoint
CREATE INDEX "webhook_delivery_due_idx" ON "webhook_delivery" USING btree ("next_attempt_at") WHERE status IN ('pending', 'sending');--> statement-breakpoint
CREATE INDEX "webhook_delivery_sending_idx" ON "webhook_delivery" USING btree ("organization_id","subscription_id") WHERE status = 'sending';--> statement-breakpoint
CREATE INDEX "webhook_delivery_resource_idx" ON "webhook_delivery" USING btree ("organization_id","subscription_id","resource_key","event_seq") WHERE status IN ('pending', 'sending');--> statement-breakpoint
CREATE INDEX "webhook_subscription_active_idx" ON "webhook_subscription" USING btree ("organization_id") WHERE active;