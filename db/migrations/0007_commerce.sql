CREATE TABLE "catalog_item" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"price" numeric(12, 2) NOT NULL,
	"currency" text DEFAULT 'BOB' NOT NULL,
	"available" boolean DEFAULT true NOT NULL,
	"branch_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"image_object_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "catalog_item_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "catalog_item_price_ck" CHECK ("catalog_item"."price" >= 0)
);
--> statement-breakpoint
CREATE TABLE "checkout_quote" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"customer_user_id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"branch_id" text NOT NULL,
	"address_id" text NOT NULL,
	"payment_destination" text DEFAULT 'platform' NOT NULL,
	"lines" jsonb NOT NULL,
	"subtotal" numeric(12, 2) NOT NULL,
	"coupon_id" text,
	"coupon_code" text,
	"coupon_error" text,
	"discount_total" numeric(12, 2) DEFAULT '0' NOT NULL,
	"delivery_fee" numeric(12, 2) NOT NULL,
	"total" numeric(12, 2) NOT NULL,
	"currency" text NOT NULL,
	"order_id" text,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "checkout_quote_organization_id_id_pk" PRIMARY KEY("organization_id","id")
);
--> statement-breakpoint
CREATE TABLE "customer_address" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"user_id" text NOT NULL,
	"label" text,
	"address" text NOT NULL,
	"location" "point" NOT NULL,
	"notes" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "customer_address_organization_id_id_pk" PRIMARY KEY("organization_id","id")
);
--> statement-breakpoint
CREATE TABLE "delivery_express_request" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"territory_id" text,
	"merchant_id" text NOT NULL,
	"branch_id" text,
	"requested_by_user_id" text,
	"customer_name" text NOT NULL,
	"customer_phone" text,
	"pickup_address" text NOT NULL,
	"dropoff_address" text NOT NULL,
	"pickup_location" "point",
	"dropoff_location" "point",
	"package_description" text,
	"declared_value" numeric(12, 2) DEFAULT '0' NOT NULL,
	"delivery_fee" numeric(12, 2) DEFAULT '0' NOT NULL,
	"source_channel" text DEFAULT 'core' NOT NULL,
	"trip_id" text,
	"status" text DEFAULT 'requested' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "delivery_express_request_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "delivery_express_request_trip_uq" UNIQUE("organization_id","trip_id"),
	CONSTRAINT "delivery_express_request_money_ck" CHECK ("delivery_express_request"."declared_value" >= 0 and "delivery_express_request"."delivery_fee" >= 0)
);
--> statement-breakpoint
CREATE TABLE "merchant_branch" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"name" text NOT NULL,
	"address" text NOT NULL,
	"location" "point" NOT NULL,
	"opening_hours" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"phone" text,
	"active" boolean DEFAULT true NOT NULL,
	"territory_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "merchant_branch_organization_id_id_pk" PRIMARY KEY("organization_id","id")
);
--> statement-breakpoint
CREATE TABLE "merchant_coupon" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"code" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"discount_type" text NOT NULL,
	"discount_value" numeric(12, 2) NOT NULL,
	"max_discount" numeric(12, 2),
	"minimum_order" numeric(12, 2) DEFAULT '0' NOT NULL,
	"product_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"branch_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"valid_from" timestamp with time zone,
	"valid_until" timestamp with time zone,
	"usage_limit" integer,
	"per_customer_limit" integer DEFAULT 1 NOT NULL,
	"usage_count" integer DEFAULT 0 NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"created_by_user_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "merchant_coupon_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "merchant_coupon_value_ck" CHECK ("merchant_coupon"."discount_value" > 0 and ("merchant_coupon"."discount_type" <> 'percent' or "merchant_coupon"."discount_value" <= 100)),
	CONSTRAINT "merchant_coupon_max_ck" CHECK ("merchant_coupon"."max_discount" is null or "merchant_coupon"."max_discount" >= 0),
	CONSTRAINT "merchant_coupon_minimum_ck" CHECK ("merchant_coupon"."minimum_order" >= 0),
	CONSTRAINT "merchant_coupon_limits_ck" CHECK (("merchant_coupon"."usage_limit" is null or "merchant_coupon"."usage_limit" > 0) and "merchant_coupon"."per_customer_limit" > 0 and "merchant_coupon"."usage_count" >= 0),
	CONSTRAINT "merchant_coupon_window_ck" CHECK ("merchant_coupon"."valid_from" is null or "merchant_coupon"."valid_until" is null or "merchant_coupon"."valid_until" > "merchant_coupon"."valid_from")
);
--> statement-breakpoint
CREATE TABLE "merchant_coupon_customer_usage" (
	"organization_id" text NOT NULL,
	"coupon_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"uses" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "merchant_coupon_customer_usage_organization_id_coupon_id_customer_id_pk" PRIMARY KEY("organization_id","coupon_id","customer_id"),
	CONSTRAINT "merchant_coupon_customer_usage_ck" CHECK ("merchant_coupon_customer_usage"."uses" >= 0)
);
--> statement-breakpoint
CREATE TABLE "merchant_coupon_redemption" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"coupon_id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"order_id" text NOT NULL,
	"discount_amount" numeric(12, 2) NOT NULL,
	"released_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "merchant_coupon_redemption_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "merchant_coupon_redemption_order_uq" UNIQUE("organization_id","order_id"),
	CONSTRAINT "merchant_coupon_redemption_amount_ck" CHECK ("merchant_coupon_redemption"."discount_amount" >= 0)
);
--> statement-breakpoint
CREATE TABLE "merchant_order" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"branch_id" text NOT NULL,
	"customer_user_id" text NOT NULL,
	"address_id" text NOT NULL,
	"dropoff_address" text NOT NULL,
	"dropoff_location" "point" NOT NULL,
	"status" text DEFAULT 'pending_confirmation' NOT NULL,
	"territory_id" text,
	"payment_destination" text DEFAULT 'platform' NOT NULL,
	"payment_status" text DEFAULT 'pending' NOT NULL,
	"payment_review_id" text,
	"order_source" text DEFAULT 'core' NOT NULL,
	"coupon_id" text,
	"coupon_code" text,
	"subtotal" numeric(12, 2) NOT NULL,
	"discount_total" numeric(12, 2) DEFAULT '0' NOT NULL,
	"delivery_fee" numeric(12, 2) NOT NULL,
	"driver_earning" numeric(12, 2) NOT NULL,
	"total" numeric(12, 2) NOT NULL,
	"currency" text NOT NULL,
	"quote_id" text,
	"trip_id" text,
	"notes" text,
	"status_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "merchant_order_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "merchant_order_totals_ck" CHECK ("merchant_order"."subtotal" >= 0 and "merchant_order"."discount_total" >= 0 and "merchant_order"."discount_total" <= "merchant_order"."subtotal" and "merchant_order"."delivery_fee" >= 0 and "merchant_order"."driver_earning" >= 0 and "merchant_order"."total" >= 0)
);
--> statement-breakpoint
CREATE TABLE "merchant_order_item" (
	"organization_id" text NOT NULL,
	"order_id" text NOT NULL,
	"line_no" integer NOT NULL,
	"catalog_item_id" text NOT NULL,
	"name" text NOT NULL,
	"unit_price" numeric(12, 2) NOT NULL,
	"quantity" integer NOT NULL,
	"line_total" numeric(12, 2) NOT NULL,
	CONSTRAINT "merchant_order_item_organization_id_order_id_line_no_pk" PRIMARY KEY("organization_id","order_id","line_no"),
	CONSTRAINT "merchant_order_item_ck" CHECK ("merchant_order_item"."quantity" > 0 and "merchant_order_item"."unit_price" >= 0 and "merchant_order_item"."line_total" >= 0)
);
--> statement-breakpoint
CREATE TABLE "territory_tariff" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"territory_id" text NOT NULL,
	"service_mode" text NOT NULL,
	"base_fee" numeric(12, 2) NOT NULL,
	"per_km_fee" numeric(12, 2) NOT NULL,
	"minimum_fee" numeric(12, 2) DEFAULT '0' NOT NULL,
	"driver_share_type" text DEFAULT 'percent' NOT NULL,
	"driver_share_value" numeric(12, 2) NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"created_by_user_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "territory_tariff_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "territory_tariff_mode_uq" UNIQUE("organization_id","territory_id","service_mode"),
	CONSTRAINT "territory_tariff_fees_ck" CHECK ("territory_tariff"."base_fee" >= 0 and "territory_tariff"."per_km_fee" >= 0 and "territory_tariff"."minimum_fee" >= 0 and "territory_tariff"."driver_share_value" >= 0),
	CONSTRAINT "territory_tariff_percent_ck" CHECK ("territory_tariff"."driver_share_type" <> 'percent' or "territory_tariff"."driver_share_value" <= 100)
);
--> statement-breakpoint
ALTER TABLE "catalog_item" ADD CONSTRAINT "catalog_item_organization_id_merchant_id_merchant_organization_id_id_fk" FOREIGN KEY ("organization_id","merchant_id") REFERENCES "public"."merchant"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "delivery_express_request" ADD CONSTRAINT "delivery_express_request_organization_id_merchant_id_merchant_organization_id_id_fk" FOREIGN KEY ("organization_id","merchant_id") REFERENCES "public"."merchant"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant_branch" ADD CONSTRAINT "merchant_branch_organization_id_merchant_id_merchant_organization_id_id_fk" FOREIGN KEY ("organization_id","merchant_id") REFERENCES "public"."merchant"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant_branch" ADD CONSTRAINT "merchant_branch_organization_id_territory_id_territory_organization_id_id_fk" FOREIGN KEY ("organization_id","territory_id") REFERENCES "public"."territory"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant_coupon" ADD CONSTRAINT "merchant_coupon_organization_id_merchant_id_merchant_organization_id_id_fk" FOREIGN KEY ("organization_id","merchant_id") REFERENCES "public"."merchant"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant_coupon_customer_usage" ADD CONSTRAINT "merchant_coupon_customer_usage_organization_id_coupon_id_merchant_coupon_organization_id_id_fk" FOREIGN KEY ("organization_id","coupon_id") REFERENCES "public"."merchant_coupon"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant_coupon_redemption" ADD CONSTRAINT "merchant_coupon_redemption_organization_id_coupon_id_merchant_coupon_organization_id_id_fk" FOREIGN KEY ("organization_id","coupon_id") REFERENCES "public"."merchant_coupon"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant_order" ADD CONSTRAINT "merchant_order_organization_id_branch_id_merchant_branch_organization_id_id_fk" FOREIGN KEY ("organization_id","branch_id") REFERENCES "public"."merchant_branch"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant_order_item" ADD CONSTRAINT "merchant_order_item_organization_id_order_id_merchant_order_organization_id_id_fk" FOREIGN KEY ("organization_id","order_id") REFERENCES "public"."merchant_order"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "territory_tariff" ADD CONSTRAINT "territory_tariff_organization_id_territory_id_territory_organization_id_id_fk" FOREIGN KEY ("organization_id","territory_id") REFERENCES "public"."territory"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "catalog_item_merchant_idx" ON "catalog_item" USING btree ("organization_id","merchant_id","id");--> statement-breakpoint
CREATE INDEX "checkout_quote_customer_idx" ON "checkout_quote" USING btree ("organization_id","customer_user_id","id");--> statement-breakpoint
CREATE INDEX "customer_address_user_idx" ON "customer_address" USING btree ("organization_id","user_id","id");--> statement-breakpoint
CREATE INDEX "delivery_express_request_merchant_idx" ON "delivery_express_request" USING btree ("organization_id","merchant_id","id");--> statement-breakpoint
CREATE INDEX "merchant_branch_merchant_idx" ON "merchant_branch" USING btree ("organization_id","merchant_id","id");--> statement-breakpoint
CREATE INDEX "merchant_branch_territory_idx" ON "merchant_branch" USING btree ("organization_id","territory_id");--> statement-breakpoint
CREATE INDEX "merchant_branch_location_gist" ON "merchant_branch" USING gist ("location");--> statement-breakpoint
CREATE UNIQUE INDEX "merchant_coupon_code_uq" ON "merchant_coupon" USING btree ("organization_id","merchant_id",lower("code"));--> statement-breakpoint
CREATE INDEX "merchant_coupon_redemption_customer_idx" ON "merchant_coupon_redemption" USING btree ("organization_id","coupon_id","customer_id");--> statement-breakpoint
CREATE INDEX "merchant_order_merchant_idx" ON "merchant_order" USING btree ("organization_id","merchant_id","id");--> statement-breakpoint
CREATE INDEX "merchant_order_customer_idx" ON "merchant_order" USING btree ("organization_id","customer_user_id","id");--> statement-breakpoint
CREATE INDEX "merchant_order_status_idx" ON "merchant_order" USING btree ("organization_id","status");--> statement-breakpoint
CREATE UNIQUE INDEX "merchant_order_quote_uq" ON "merchant_order" USING btree ("organization_id","quote_id") WHERE quote_id IS NOT NULL;