ALTER TABLE "checkout_quote" ADD COLUMN "pickup_after" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "checkout_quote" ADD COLUMN "pickup_before" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "checkout_quote" ADD COLUMN "units" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "checkout_quote" ADD COLUMN "weight_kg" double precision;--> statement-breakpoint
ALTER TABLE "checkout_quote" ADD COLUMN "volume_l" double precision;--> statement-breakpoint
ALTER TABLE "delivery_express_request" ADD COLUMN "deliver_after" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "delivery_express_request" ADD COLUMN "deliver_before" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "delivery_express_request" ADD COLUMN "pickup_after" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "delivery_express_request" ADD COLUMN "pickup_before" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "delivery_express_request" ADD COLUMN "units" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "delivery_express_request" ADD COLUMN "weight_kg" double precision;--> statement-breakpoint
ALTER TABLE "delivery_express_request" ADD COLUMN "volume_l" double precision;--> statement-breakpoint
ALTER TABLE "merchant_order" ADD COLUMN "pickup_after" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "merchant_order" ADD COLUMN "pickup_before" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "merchant_order" ADD COLUMN "units" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "merchant_order" ADD COLUMN "weight_kg" double precision;--> statement-breakpoint
ALTER TABLE "merchant_order" ADD COLUMN "volume_l" double precision;