ALTER TABLE "merchant_channel_settings" ADD COLUMN "chat_token" text;--> statement-breakpoint
ALTER TABLE "merchant_channel_settings" ADD COLUMN "chat_token_set_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "webhook_subscription" ADD COLUMN "secret_set_at" timestamp with time zone DEFAULT now() NOT NULL;