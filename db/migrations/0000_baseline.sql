CREATE TABLE "audit_log" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"actor_user_id" text,
	"action" text NOT NULL,
	"entity_type" text NOT NULL,
	"entity_id" text NOT NULL,
	"before" jsonb,
	"after" jsonb,
	"request_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "audit_log_organization_id_id_pk" PRIMARY KEY("organization_id","id")
);
--> statement-breakpoint
CREATE TABLE "event" (
	"organization_id" text NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "event_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"id" text NOT NULL,
	"type" text NOT NULL,
	"entity_type" text NOT NULL,
	"entity_id" text NOT NULL,
	"territory_id" text,
	"actor_user_id" text,
	"audience_user_ids" text[] DEFAULT '{}' NOT NULL,
	"payload" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "event_organization_id_seq_pk" PRIMARY KEY("organization_id","seq")
);
--> statement-breakpoint
CREATE TABLE "idempotency_key" (
	"organization_id" text NOT NULL,
	"scope" text NOT NULL,
	"key" text NOT NULL,
	"request_hash" text NOT NULL,
	"status_code" integer,
	"response" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "idempotency_key_organization_id_scope_key_pk" PRIMARY KEY("organization_id","scope","key")
);
--> statement-breakpoint
CREATE TABLE "login_known_address" (
	"login" text NOT NULL,
	"address" text NOT NULL,
	"last_success_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "login_known_address_login_address_pk" PRIMARY KEY("login","address")
);
--> statement-breakpoint
CREATE TABLE "login_throttle" (
	"key" text PRIMARY KEY NOT NULL,
	"failures" integer DEFAULT 0 NOT NULL,
	"window_start" timestamp with time zone DEFAULT now() NOT NULL,
	"blocked_until" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rate_limit_bucket" (
	"key" text NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "rate_limit_bucket_key_window_start_pk" PRIMARY KEY("key","window_start")
);
--> statement-breakpoint
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
	"changed_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL,
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
	"changed_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL,
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
	"changed_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL,
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
CREATE TABLE "dispatch_plan" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"status" text DEFAULT 'proposed' NOT NULL,
	"created_by_user_id" text NOT NULL,
	"territory_ids" text[],
	"request" jsonb NOT NULL,
	"inputs" jsonb NOT NULL,
	"result" jsonb NOT NULL,
	"changes" jsonb,
	"expires_at" timestamp with time zone NOT NULL,
	"committed_at" timestamp with time zone,
	"committed_by_user_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "dispatch_plan_organization_id_id_pk" PRIMARY KEY("organization_id","id")
);
--> statement-breakpoint
CREATE TABLE "document" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"owner_user_id" text NOT NULL,
	"subject_type" text NOT NULL,
	"subject_id" text NOT NULL,
	"doc_type" text NOT NULL,
	"title" text NOT NULL,
	"storage_object_id" text,
	"status" text DEFAULT 'pending' NOT NULL,
	"review_notes" text,
	"reviewed_by_user_id" text,
	"reviewed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "document_organization_id_id_pk" PRIMARY KEY("organization_id","id")
);
--> statement-breakpoint
CREATE TABLE "auth_session" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"user_id" text NOT NULL,
	"user_agent" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	"revoked_reason" text,
	CONSTRAINT "auth_session_organization_id_id_pk" PRIMARY KEY("organization_id","id")
);
--> statement-breakpoint
CREATE TABLE "refresh_token" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"session_id" text NOT NULL,
	"token_hash" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "refresh_token_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "refresh_token_hash_uq" UNIQUE("organization_id","token_hash")
);
--> statement-breakpoint
CREATE TABLE "users" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"email" text,
	"phone" text,
	"password_hash" text NOT NULL,
	"display_name" text NOT NULL,
	"role" text NOT NULL,
	"dispatch" boolean DEFAULT false NOT NULL,
	"subadmin" boolean DEFAULT false NOT NULL,
	"platform_admin" boolean DEFAULT false NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "users_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "users_org_email_uq" UNIQUE("organization_id","email"),
	CONSTRAINT "users_org_phone_uq" UNIQUE("organization_id","phone")
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
CREATE TABLE "driver" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"user_id" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"status_reason" text,
	"available" boolean DEFAULT false NOT NULL,
	"availability_locked" boolean DEFAULT false NOT NULL,
	"availability_lock_reason" text,
	"availability_locked_by_user_id" text,
	"availability_locked_at" timestamp with time zone,
	"vehicle_type" text DEFAULT 'motorcycle' NOT NULL,
	"capacity" integer DEFAULT 1 NOT NULL,
	"active_trips" integer DEFAULT 0 NOT NULL,
	"last_location" "point",
	"last_location_at" timestamp with time zone,
	"last_seen_at" timestamp with time zone,
	"decided_by_user_id" text,
	"decided_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "driver_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "driver_user_uq" UNIQUE("organization_id","user_id"),
	CONSTRAINT "driver_active_trips_ck" CHECK ("driver"."active_trips" >= 0),
	CONSTRAINT "driver_capacity_ck" CHECK ("driver"."capacity" between 1 and 50),
	CONSTRAINT "driver_status_ck" CHECK ("driver"."status" in ('pending', 'approved', 'rejected', 'suspended'))
);
--> statement-breakpoint
CREATE TABLE "driver_location" (
	"organization_id" text NOT NULL,
	"driver_id" text NOT NULL,
	"client_point_id" text NOT NULL,
	"location" "point" NOT NULL,
	"recorded_at" timestamp with time zone NOT NULL,
	"accuracy_m" double precision,
	"speed_mps" double precision,
	"heading" double precision,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "driver_location_organization_id_driver_id_client_point_id_pk" PRIMARY KEY("organization_id","driver_id","client_point_id")
);
--> statement-breakpoint
CREATE TABLE "driver_territory" (
	"organization_id" text NOT NULL,
	"driver_id" text NOT NULL,
	"territory_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "driver_territory_organization_id_driver_id_territory_id_pk" PRIMARY KEY("organization_id","driver_id","territory_id")
);
--> statement-breakpoint
CREATE TABLE "logistics_settings" (
	"organization_id" text PRIMARY KEY NOT NULL,
	"auto_assign_radius_m" integer DEFAULT 5000 NOT NULL,
	"acceptance_timeout_s" integer DEFAULT 120 NOT NULL,
	"acceptance_timeout_enabled" boolean DEFAULT false NOT NULL,
	"acceptance_max_offers" integer DEFAULT 3 NOT NULL,
	"assignment_strategy" text DEFAULT 'nearest' NOT NULL,
	"failed_delivery_policy" text DEFAULT 'return_to_merchant' NOT NULL,
	"geofence_radius_m" integer DEFAULT 100 NOT NULL,
	"average_speed_kmh" integer DEFAULT 25 NOT NULL,
	"default_delivery_fee" numeric(12, 2) DEFAULT '15.00' NOT NULL,
	"driver_flat_fee" numeric(12, 2) DEFAULT '10.00' NOT NULL,
	"currency" text DEFAULT 'BOB' NOT NULL,
	"updated_by_user_id" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "merchant" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"owner_user_id" text NOT NULL,
	"name" text NOT NULL,
	"phone" text,
	"address" text,
	"location" "point",
	"status" text DEFAULT 'pending' NOT NULL,
	"status_reason" text,
	"commission_percent" numeric(5, 2) DEFAULT '10.00' NOT NULL,
	"territory_id" text,
	"decided_by_user_id" text,
	"decided_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "merchant_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "merchant_owner_uq" UNIQUE("organization_id","owner_user_id"),
	CONSTRAINT "merchant_commission_ck" CHECK ("merchant"."commission_percent" >= 0 and "merchant"."commission_percent" <= 100),
	CONSTRAINT "merchant_status_ck" CHECK ("merchant"."status" in ('pending', 'approved', 'rejected', 'suspended'))
);
--> statement-breakpoint
CREATE TABLE "territory" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"geometry" jsonb NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"created_by_user_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "territory_organization_id_id_pk" PRIMARY KEY("organization_id","id")
);
--> statement-breakpoint
CREATE TABLE "territory_ring" (
	"organization_id" text NOT NULL,
	"territory_id" text NOT NULL,
	"part_no" integer NOT NULL,
	"ring_no" integer NOT NULL,
	"ring" "polygon" NOT NULL,
	CONSTRAINT "territory_ring_organization_id_territory_id_part_no_ring_no_pk" PRIMARY KEY("organization_id","territory_id","part_no","ring_no")
);
--> statement-breakpoint
CREATE TABLE "trip" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"service_mode" text DEFAULT 'marketplace' NOT NULL,
	"source_channel" text DEFAULT 'core' NOT NULL,
	"territory_id" text,
	"merchant_id" text,
	"customer_user_id" text,
	"order_id" text,
	"express_request_id" text,
	"driver_id" text,
	"plan_id" text,
	"stop_order" integer,
	"pickup_location" "point" NOT NULL,
	"pickup_address" text NOT NULL,
	"dropoff_location" "point" NOT NULL,
	"dropoff_address" text NOT NULL,
	"notes" text,
	"delivery_fee" numeric(12, 2) NOT NULL,
	"driver_earning" numeric(12, 2) NOT NULL,
	"currency" text DEFAULT 'BOB' NOT NULL,
	"pickup_pin" text NOT NULL,
	"delivery_pin" text NOT NULL,
	"pickup_pin_attempts" integer DEFAULT 0 NOT NULL,
	"delivery_pin_attempts" integer DEFAULT 0 NOT NULL,
	"status_reason" text,
	"created_by_user_id" text,
	"assigned_at" timestamp with time zone,
	"accepted_at" timestamp with time zone,
	"picked_up_at" timestamp with time zone,
	"in_transit_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"cancelled_at" timestamp with time zone,
	"failed_at" timestamp with time zone,
	"returned_at" timestamp with time zone,
	"failure_reason" text,
	"failure_note" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"changed_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL,
	CONSTRAINT "trip_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "trip_fee_ck" CHECK ("trip"."delivery_fee" >= 0 and "trip"."driver_earning" >= 0)
);
--> statement-breakpoint
CREATE TABLE "trip_geofence" (
	"organization_id" text NOT NULL,
	"trip_id" text NOT NULL,
	"stop" text NOT NULL,
	"driver_id" text NOT NULL,
	"distance_m" double precision NOT NULL,
	"entered_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "trip_geofence_organization_id_trip_id_stop_pk" PRIMARY KEY("organization_id","trip_id","stop")
);
--> statement-breakpoint
CREATE TABLE "trip_proof" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"trip_id" text NOT NULL,
	"stage" text NOT NULL,
	"pin_verified" boolean DEFAULT true NOT NULL,
	"evidence_type" text,
	"storage_key" text,
	"driver_id" text,
	"verified_by_user_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "trip_proof_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "trip_proof_stage_uq" UNIQUE("organization_id","trip_id","stage")
);
--> statement-breakpoint
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
CREATE TABLE "trip_rejection" (
	"organization_id" text NOT NULL,
	"trip_id" text NOT NULL,
	"driver_id" text NOT NULL,
	"reason" text,
	"kind" text DEFAULT 'rejected' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "trip_rejection_organization_id_trip_id_driver_id_pk" PRIMARY KEY("organization_id","trip_id","driver_id")
);
--> statement-breakpoint
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
CREATE TABLE "driver_settlement" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"driver_id" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"cutoff_at" timestamp with time zone NOT NULL,
	"amount" numeric(12, 2) NOT NULL,
	"trip_count" integer NOT NULL,
	"currency" text DEFAULT 'BOB' NOT NULL,
	"note" text,
	"payment_reference" text,
	"created_by_user_id" text,
	"paid_by_user_id" text,
	"paid_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "driver_settlement_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "driver_settlement_amount_ck" CHECK ("driver_settlement"."amount" >= 0)
);
--> statement-breakpoint
CREATE TABLE "driver_settlement_item" (
	"organization_id" text NOT NULL,
	"trip_id" text NOT NULL,
	"settlement_id" text NOT NULL,
	"amount" numeric(12, 2) NOT NULL,
	"completed_at" timestamp with time zone NOT NULL,
	CONSTRAINT "driver_settlement_item_organization_id_trip_id_pk" PRIMARY KEY("organization_id","trip_id")
);
--> statement-breakpoint
CREATE TABLE "merchant_order_posting" (
	"organization_id" text NOT NULL,
	"order_id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"payment_destination" text NOT NULL,
	"refunded_total" numeric(12, 2) DEFAULT '0' NOT NULL,
	"order_total" numeric(12, 2) NOT NULL,
	"posted_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "merchant_order_posting_organization_id_order_id_pk" PRIMARY KEY("organization_id","order_id"),
	CONSTRAINT "merchant_order_posting_refund_ck" CHECK ("merchant_order_posting"."refunded_total" >= 0 AND "merchant_order_posting"."refunded_total" <= "merchant_order_posting"."order_total")
);
--> statement-breakpoint
CREATE TABLE "merchant_payment_profile" (
	"organization_id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"direct_payment_enabled" boolean DEFAULT false NOT NULL,
	"instructions" text,
	"qr_storage_object_id" text,
	"account_holder" text,
	"bank_name" text,
	"account_number_masked" text,
	"payment_reference_hint" text,
	"updated_by_user_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "merchant_payment_profile_organization_id_merchant_id_pk" PRIMARY KEY("organization_id","merchant_id"),
	CONSTRAINT "merchant_payment_profile_masked_ck" CHECK ("merchant_payment_profile"."account_number_masked" IS NULL OR "merchant_payment_profile"."account_number_masked" ~ '^\*{4}[A-Za-z0-9]{1,4}$')
);
--> statement-breakpoint
CREATE TABLE "merchant_payment_receipt" (
	"organization_id" text NOT NULL,
	"order_id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"amount" numeric(12, 2) NOT NULL,
	"currency" text NOT NULL,
	"method" text NOT NULL,
	"reference" text,
	"note" text,
	"recorded_by_user_id" text,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "merchant_payment_receipt_organization_id_order_id_pk" PRIMARY KEY("organization_id","order_id"),
	CONSTRAINT "merchant_payment_receipt_amount_ck" CHECK ("merchant_payment_receipt"."amount" > 0)
);
--> statement-breakpoint
CREATE TABLE "merchant_payment_review" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"territory_id" text,
	"order_id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"amount" numeric(12, 2) NOT NULL,
	"currency" text DEFAULT 'BOB' NOT NULL,
	"proof_storage_object_id" text,
	"customer_reference" text,
	"status" text DEFAULT 'pending' NOT NULL,
	"review_notes" text,
	"submissions" integer DEFAULT 1 NOT NULL,
	"submitted_at" timestamp with time zone DEFAULT now() NOT NULL,
	"reviewed_by_user_id" text,
	"reviewed_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "merchant_payment_review_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "merchant_payment_review_order_uq" UNIQUE("organization_id","order_id"),
	CONSTRAINT "merchant_payment_review_amount_ck" CHECK ("merchant_payment_review"."amount" >= 0)
);
--> statement-breakpoint
CREATE TABLE "merchant_settlement" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"period_start" timestamp with time zone NOT NULL,
	"period_end" timestamp with time zone NOT NULL,
	"status" text NOT NULL,
	"gross_amount" numeric(12, 2) NOT NULL,
	"debt_netted" numeric(12, 2) DEFAULT '0' NOT NULL,
	"payout_amount" numeric(12, 2) NOT NULL,
	"currency" text DEFAULT 'BOB' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "merchant_settlement_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "merchant_settlement_period_uq" UNIQUE("organization_id","merchant_id","period_start")
);
--> statement-breakpoint
CREATE TABLE "merchant_settlement_rule" (
	"organization_id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"enabled" boolean DEFAULT false NOT NULL,
	"frequency" text DEFAULT 'weekly' NOT NULL,
	"minimum_balance" numeric(12, 2) DEFAULT '0' NOT NULL,
	"net_debt_first" boolean DEFAULT true NOT NULL,
	"settled_through" timestamp with time zone,
	"updated_by_user_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "merchant_settlement_rule_organization_id_merchant_id_pk" PRIMARY KEY("organization_id","merchant_id"),
	CONSTRAINT "merchant_settlement_rule_min_ck" CHECK ("merchant_settlement_rule"."minimum_balance" >= 0)
);
--> statement-breakpoint
CREATE TABLE "merchant_wallet_entry" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"order_id" text,
	"trip_id" text,
	"driver_id" text,
	"settlement_id" text,
	"entry_type" text NOT NULL,
	"payment_destination" text,
	"amount" numeric(12, 2) NOT NULL,
	"currency" text DEFAULT 'BOB' NOT NULL,
	"territory_id" text,
	"note" text,
	"created_by_user_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "merchant_wallet_entry_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "merchant_wallet_entry_sign_ck" CHECK ((entry_type IN ('sale_credit', 'merchant_debt_payment') AND amount >= 0)
        OR (entry_type IN ('platform_commission', 'delivery_fee_debit', 'refund', 'settlement_debit') AND amount <= 0)
        OR entry_type = 'adjustment')
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
	"changed_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL,
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
	"changed_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL,
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
CREATE TABLE "operator" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"legal_name" text NOT NULL,
	"contact_email" text NOT NULL,
	"contact_phone" text,
	"country" text,
	"status_reason" text,
	"decided_by_user_id" text,
	"decided_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "operator_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "operator_org_uq" UNIQUE("organization_id")
);
--> statement-breakpoint
CREATE TABLE "organization" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"slug" text NOT NULL,
	"primary_color" text,
	"secondary_color" text,
	"logo_object_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "organization_slug_unique" UNIQUE("slug")
);
--> statement-breakpoint
CREATE TABLE "organization_settings" (
	"organization_id" text PRIMARY KEY NOT NULL,
	"require_platform_payment_before_order" boolean DEFAULT false NOT NULL,
	"default_currency" text DEFAULT 'BOB' NOT NULL,
	"timezone" text DEFAULT 'America/La_Paz' NOT NULL,
	"default_country" text DEFAULT 'BO' NOT NULL,
	"support_phone" text,
	"support_email" text,
	"updated_by_user_id" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "private_storage_object" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"purpose" text NOT NULL,
	"mime_type" text NOT NULL,
	"size_bytes" bigint NOT NULL,
	"sha256" text NOT NULL,
	"filename" text NOT NULL,
	"driver" text NOT NULL,
	"owner_type" text,
	"owner_id" text,
	"trip_id" text,
	"stage" text,
	"proof_type" text,
	"territory_id" text,
	"upload_id" text NOT NULL,
	"created_by_user_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "private_storage_object_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "private_storage_object_upload_uq" UNIQUE("organization_id","upload_id"),
	CONSTRAINT "private_storage_object_purpose_ck" CHECK ("private_storage_object"."purpose" IN ('pickup_evidence','delivery_evidence','document','avatar','merchant_payment_qr','payment_proof','coupon_asset','other')),
	CONSTRAINT "private_storage_object_sha256_ck" CHECK ("private_storage_object"."sha256" ~ '^[0-9a-f]{64}$')
);
--> statement-breakpoint
CREATE TABLE "storage_upload" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"object_id" text NOT NULL,
	"purpose" text NOT NULL,
	"mime_type" text NOT NULL,
	"size_bytes" bigint NOT NULL,
	"filename" text NOT NULL,
	"token_hash" text NOT NULL,
	"status" text DEFAULT 'open' NOT NULL,
	"owner_type" text,
	"owner_id" text,
	"trip_id" text,
	"stage" text,
	"proof_type" text,
	"territory_id" text,
	"created_by_user_id" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"claimed_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "storage_upload_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "storage_upload_purpose_ck" CHECK ("storage_upload"."purpose" IN ('pickup_evidence','delivery_evidence','document','avatar','merchant_payment_qr','payment_proof','coupon_asset','other')),
	CONSTRAINT "storage_upload_size_ck" CHECK ("storage_upload"."size_bytes" > 0)
);
--> statement-breakpoint
CREATE TABLE "banner_territory" (
	"organization_id" text NOT NULL,
	"banner_id" text NOT NULL,
	"territory_id" text NOT NULL,
	CONSTRAINT "banner_territory_organization_id_banner_id_territory_id_pk" PRIMARY KEY("organization_id","banner_id","territory_id")
);
--> statement-breakpoint
CREATE TABLE "subadmin_profile" (
	"organization_id" text NOT NULL,
	"user_id" text NOT NULL,
	"display_name" text NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"permissions" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"parent_subadmin_user_id" text,
	"created_by_user_id" text,
	"commission_min_percent" numeric(5, 2),
	"commission_max_percent" numeric(5, 2),
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "subadmin_profile_organization_id_user_id_pk" PRIMARY KEY("organization_id","user_id"),
	CONSTRAINT "subadmin_commission_range_ck" CHECK ("subadmin_profile"."commission_min_percent" BETWEEN 0 AND 100 AND "subadmin_profile"."commission_max_percent" BETWEEN 0 AND 100),
	CONSTRAINT "subadmin_commission_order_ck" CHECK ("subadmin_profile"."commission_min_percent" IS NULL OR "subadmin_profile"."commission_max_percent" IS NULL OR "subadmin_profile"."commission_min_percent" <= "subadmin_profile"."commission_max_percent")
);
--> statement-breakpoint
CREATE TABLE "user_territory" (
	"organization_id" text NOT NULL,
	"user_id" text NOT NULL,
	"territory_id" text NOT NULL,
	"created_by_user_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "user_territory_organization_id_user_id_territory_id_pk" PRIMARY KEY("organization_id","user_id","territory_id")
);
--> statement-breakpoint
CREATE TABLE "zone_banner" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"title" text NOT NULL,
	"body" text,
	"image_storage_object_id" text,
	"link_url" text,
	"valid_from" timestamp with time zone DEFAULT now() NOT NULL,
	"valid_until" timestamp with time zone,
	"active" boolean DEFAULT true NOT NULL,
	"created_by_user_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "zone_banner_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "zone_banner_validity_ck" CHECK ("zone_banner"."valid_until" IS NULL OR "zone_banner"."valid_until" > "zone_banner"."valid_from")
);
--> statement-breakpoint
ALTER TABLE "chat_order_outbox" ADD CONSTRAINT "chat_order_outbox_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant_channel_settings" ADD CONSTRAINT "merchant_channel_settings_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
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
ALTER TABLE "dispatch_plan" ADD CONSTRAINT "dispatch_plan_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "document" ADD CONSTRAINT "document_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "auth_session" ADD CONSTRAINT "auth_session_organization_id_user_id_users_organization_id_id_fk" FOREIGN KEY ("organization_id","user_id") REFERENCES "public"."users"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refresh_token" ADD CONSTRAINT "refresh_token_organization_id_session_id_auth_session_organization_id_id_fk" FOREIGN KEY ("organization_id","session_id") REFERENCES "public"."auth_session"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "integration_webhook_event" ADD CONSTRAINT "integration_webhook_event_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "driver" ADD CONSTRAINT "driver_organization_id_user_id_users_organization_id_id_fk" FOREIGN KEY ("organization_id","user_id") REFERENCES "public"."users"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "driver_territory" ADD CONSTRAINT "driver_territory_organization_id_driver_id_driver_organization_id_id_fk" FOREIGN KEY ("organization_id","driver_id") REFERENCES "public"."driver"("organization_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "driver_territory" ADD CONSTRAINT "driver_territory_organization_id_territory_id_territory_organization_id_id_fk" FOREIGN KEY ("organization_id","territory_id") REFERENCES "public"."territory"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "logistics_settings" ADD CONSTRAINT "logistics_settings_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant" ADD CONSTRAINT "merchant_organization_id_owner_user_id_users_organization_id_id_fk" FOREIGN KEY ("organization_id","owner_user_id") REFERENCES "public"."users"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant" ADD CONSTRAINT "merchant_organization_id_territory_id_territory_organization_id_id_fk" FOREIGN KEY ("organization_id","territory_id") REFERENCES "public"."territory"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "territory" ADD CONSTRAINT "territory_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "territory_ring" ADD CONSTRAINT "territory_ring_organization_id_territory_id_territory_organization_id_id_fk" FOREIGN KEY ("organization_id","territory_id") REFERENCES "public"."territory"("organization_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trip" ADD CONSTRAINT "trip_organization_id_driver_id_driver_organization_id_id_fk" FOREIGN KEY ("organization_id","driver_id") REFERENCES "public"."driver"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trip" ADD CONSTRAINT "trip_organization_id_merchant_id_merchant_organization_id_id_fk" FOREIGN KEY ("organization_id","merchant_id") REFERENCES "public"."merchant"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trip" ADD CONSTRAINT "trip_organization_id_territory_id_territory_organization_id_id_fk" FOREIGN KEY ("organization_id","territory_id") REFERENCES "public"."territory"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trip_geofence" ADD CONSTRAINT "trip_geofence_organization_id_trip_id_trip_organization_id_id_fk" FOREIGN KEY ("organization_id","trip_id") REFERENCES "public"."trip"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trip_proof" ADD CONSTRAINT "trip_proof_organization_id_trip_id_trip_organization_id_id_fk" FOREIGN KEY ("organization_id","trip_id") REFERENCES "public"."trip"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trip_recipient_link" ADD CONSTRAINT "trip_recipient_link_organization_id_trip_id_trip_organization_id_id_fk" FOREIGN KEY ("organization_id","trip_id") REFERENCES "public"."trip"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trip_rejection" ADD CONSTRAINT "trip_rejection_organization_id_trip_id_trip_organization_id_id_fk" FOREIGN KEY ("organization_id","trip_id") REFERENCES "public"."trip"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sync_operation" ADD CONSTRAINT "sync_operation_organization_id_user_id_users_organization_id_id_fk" FOREIGN KEY ("organization_id","user_id") REFERENCES "public"."users"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "driver_settlement" ADD CONSTRAINT "driver_settlement_organization_id_driver_id_driver_organization_id_id_fk" FOREIGN KEY ("organization_id","driver_id") REFERENCES "public"."driver"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "driver_settlement_item" ADD CONSTRAINT "driver_settlement_item_organization_id_settlement_id_driver_settlement_organization_id_id_fk" FOREIGN KEY ("organization_id","settlement_id") REFERENCES "public"."driver_settlement"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant_payment_profile" ADD CONSTRAINT "merchant_payment_profile_organization_id_merchant_id_merchant_organization_id_id_fk" FOREIGN KEY ("organization_id","merchant_id") REFERENCES "public"."merchant"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant_payment_review" ADD CONSTRAINT "merchant_payment_review_organization_id_merchant_id_merchant_organization_id_id_fk" FOREIGN KEY ("organization_id","merchant_id") REFERENCES "public"."merchant"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant_settlement" ADD CONSTRAINT "merchant_settlement_organization_id_merchant_id_merchant_organization_id_id_fk" FOREIGN KEY ("organization_id","merchant_id") REFERENCES "public"."merchant"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant_settlement_rule" ADD CONSTRAINT "merchant_settlement_rule_organization_id_merchant_id_merchant_organization_id_id_fk" FOREIGN KEY ("organization_id","merchant_id") REFERENCES "public"."merchant"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant_wallet_entry" ADD CONSTRAINT "merchant_wallet_entry_organization_id_merchant_id_merchant_organization_id_id_fk" FOREIGN KEY ("organization_id","merchant_id") REFERENCES "public"."merchant"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device" ADD CONSTRAINT "device_organization_id_user_id_users_organization_id_id_fk" FOREIGN KEY ("organization_id","user_id") REFERENCES "public"."users"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notification" ADD CONSTRAINT "notification_organization_id_user_id_users_organization_id_id_fk" FOREIGN KEY ("organization_id","user_id") REFERENCES "public"."users"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "push_outbox" ADD CONSTRAINT "push_outbox_organization_id_notification_id_notification_organization_id_id_fk" FOREIGN KEY ("organization_id","notification_id") REFERENCES "public"."notification"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "operator" ADD CONSTRAINT "operator_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "organization_settings" ADD CONSTRAINT "organization_settings_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "private_storage_object" ADD CONSTRAINT "private_storage_object_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "private_storage_object" ADD CONSTRAINT "private_storage_object_organization_id_created_by_user_id_users_organization_id_id_fk" FOREIGN KEY ("organization_id","created_by_user_id") REFERENCES "public"."users"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "private_storage_object" ADD CONSTRAINT "private_storage_object_organization_id_upload_id_storage_upload_organization_id_id_fk" FOREIGN KEY ("organization_id","upload_id") REFERENCES "public"."storage_upload"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "storage_upload" ADD CONSTRAINT "storage_upload_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "storage_upload" ADD CONSTRAINT "storage_upload_organization_id_created_by_user_id_users_organization_id_id_fk" FOREIGN KEY ("organization_id","created_by_user_id") REFERENCES "public"."users"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "banner_territory" ADD CONSTRAINT "banner_territory_organization_id_banner_id_zone_banner_organization_id_id_fk" FOREIGN KEY ("organization_id","banner_id") REFERENCES "public"."zone_banner"("organization_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "banner_territory" ADD CONSTRAINT "banner_territory_organization_id_territory_id_territory_organization_id_id_fk" FOREIGN KEY ("organization_id","territory_id") REFERENCES "public"."territory"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "subadmin_profile" ADD CONSTRAINT "subadmin_profile_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "subadmin_profile" ADD CONSTRAINT "subadmin_profile_organization_id_user_id_users_organization_id_id_fk" FOREIGN KEY ("organization_id","user_id") REFERENCES "public"."users"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "subadmin_profile" ADD CONSTRAINT "subadmin_profile_organization_id_parent_subadmin_user_id_subadmin_profile_organization_id_user_id_fk" FOREIGN KEY ("organization_id","parent_subadmin_user_id") REFERENCES "public"."subadmin_profile"("organization_id","user_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_territory" ADD CONSTRAINT "user_territory_organization_id_user_id_users_organization_id_id_fk" FOREIGN KEY ("organization_id","user_id") REFERENCES "public"."users"("organization_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_territory" ADD CONSTRAINT "user_territory_organization_id_territory_id_territory_organization_id_id_fk" FOREIGN KEY ("organization_id","territory_id") REFERENCES "public"."territory"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_entity_idx" ON "audit_log" USING btree ("organization_id","entity_type","entity_id");--> statement-breakpoint
CREATE INDEX "audit_action_idx" ON "audit_log" USING btree ("organization_id","action","id");--> statement-breakpoint
CREATE INDEX "event_seq_idx" ON "event" USING btree ("seq");--> statement-breakpoint
CREATE INDEX "event_entity_idx" ON "event" USING btree ("organization_id","entity_type","entity_id","seq");--> statement-breakpoint
CREATE INDEX "chat_order_outbox_merchant_idx" ON "chat_order_outbox" USING btree ("organization_id","merchant_id","id");--> statement-breakpoint
CREATE INDEX "chat_order_outbox_order_idx" ON "chat_order_outbox" USING btree ("organization_id","order_id");--> statement-breakpoint
CREATE INDEX "chat_order_outbox_express_idx" ON "chat_order_outbox" USING btree ("organization_id","express_request_id");--> statement-breakpoint
CREATE INDEX "chat_order_outbox_due_idx" ON "chat_order_outbox" USING btree ("available_at") WHERE status IN ('pending', 'sending');--> statement-breakpoint
CREATE UNIQUE INDEX "chat_order_outbox_order_created_uq" ON "chat_order_outbox" USING btree ("organization_id","order_id") WHERE message_type = 'order_created' AND order_id IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "chat_order_outbox_express_created_uq" ON "chat_order_outbox" USING btree ("organization_id","express_request_id") WHERE message_type = 'order_created' AND express_request_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "catalog_item_merchant_idx" ON "catalog_item" USING btree ("organization_id","merchant_id","id");--> statement-breakpoint
CREATE INDEX "catalog_item_merchant_sync_idx" ON "catalog_item" USING btree ("organization_id","merchant_id","changed_xid");--> statement-breakpoint
CREATE INDEX "checkout_quote_customer_idx" ON "checkout_quote" USING btree ("organization_id","customer_user_id","id");--> statement-breakpoint
CREATE INDEX "customer_address_user_idx" ON "customer_address" USING btree ("organization_id","user_id","id");--> statement-breakpoint
CREATE INDEX "customer_address_user_sync_idx" ON "customer_address" USING btree ("organization_id","user_id","changed_xid");--> statement-breakpoint
CREATE INDEX "delivery_express_request_merchant_idx" ON "delivery_express_request" USING btree ("organization_id","merchant_id","id");--> statement-breakpoint
CREATE INDEX "merchant_branch_merchant_idx" ON "merchant_branch" USING btree ("organization_id","merchant_id","id");--> statement-breakpoint
CREATE INDEX "merchant_branch_territory_idx" ON "merchant_branch" USING btree ("organization_id","territory_id");--> statement-breakpoint
CREATE INDEX "merchant_branch_location_gist" ON "merchant_branch" USING gist ("location");--> statement-breakpoint
CREATE UNIQUE INDEX "merchant_coupon_code_uq" ON "merchant_coupon" USING btree ("organization_id","merchant_id",lower("code"));--> statement-breakpoint
CREATE INDEX "merchant_coupon_redemption_customer_idx" ON "merchant_coupon_redemption" USING btree ("organization_id","coupon_id","customer_id");--> statement-breakpoint
CREATE INDEX "merchant_order_merchant_idx" ON "merchant_order" USING btree ("organization_id","merchant_id","id");--> statement-breakpoint
CREATE INDEX "merchant_order_customer_idx" ON "merchant_order" USING btree ("organization_id","customer_user_id","id");--> statement-breakpoint
CREATE INDEX "merchant_order_merchant_sync_idx" ON "merchant_order" USING btree ("organization_id","merchant_id","changed_xid");--> statement-breakpoint
CREATE INDEX "merchant_order_customer_sync_idx" ON "merchant_order" USING btree ("organization_id","customer_user_id","changed_xid");--> statement-breakpoint
CREATE INDEX "merchant_order_status_idx" ON "merchant_order" USING btree ("organization_id","status");--> statement-breakpoint
CREATE UNIQUE INDEX "merchant_order_quote_uq" ON "merchant_order" USING btree ("organization_id","quote_id") WHERE quote_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "dispatch_plan_status_idx" ON "dispatch_plan" USING btree ("organization_id","status","expires_at");--> statement-breakpoint
CREATE INDEX "document_status_idx" ON "document" USING btree ("organization_id","status","id");--> statement-breakpoint
CREATE INDEX "refresh_token_hash_idx" ON "refresh_token" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "users_email_idx" ON "users" USING btree ("email");--> statement-breakpoint
CREATE INDEX "users_phone_idx" ON "users" USING btree ("phone");--> statement-breakpoint
CREATE INDEX "integration_webhook_event_received_idx" ON "integration_webhook_event" USING btree ("organization_id","received_at");--> statement-breakpoint
CREATE INDEX "driver_status_idx" ON "driver" USING btree ("organization_id","status","id");--> statement-breakpoint
CREATE INDEX "driver_location_gist" ON "driver" USING gist ("last_location");--> statement-breakpoint
CREATE INDEX "driver_location_time_idx" ON "driver_location" USING btree ("organization_id","driver_id","recorded_at");--> statement-breakpoint
CREATE INDEX "driver_territory_territory_idx" ON "driver_territory" USING btree ("organization_id","territory_id");--> statement-breakpoint
CREATE INDEX "merchant_status_idx" ON "merchant" USING btree ("organization_id","status","id");--> statement-breakpoint
CREATE INDEX "merchant_territory_idx" ON "merchant" USING btree ("organization_id","territory_id","id");--> statement-breakpoint
CREATE INDEX "territory_active_idx" ON "territory" USING btree ("organization_id","active","created_at");--> statement-breakpoint
CREATE INDEX "territory_ring_gist" ON "territory_ring" USING gist ("ring");--> statement-breakpoint
CREATE INDEX "trip_status_idx" ON "trip" USING btree ("organization_id","status","id");--> statement-breakpoint
CREATE INDEX "trip_driver_idx" ON "trip" USING btree ("organization_id","driver_id","id");--> statement-breakpoint
CREATE INDEX "trip_driver_sync_idx" ON "trip" USING btree ("organization_id","driver_id","changed_xid");--> statement-breakpoint
CREATE INDEX "trip_territory_idx" ON "trip" USING btree ("organization_id","territory_id","id");--> statement-breakpoint
CREATE INDEX "trip_merchant_idx" ON "trip" USING btree ("organization_id","merchant_id","id");--> statement-breakpoint
CREATE INDEX "trip_customer_idx" ON "trip" USING btree ("organization_id","customer_user_id","id");--> statement-breakpoint
CREATE INDEX "trip_created_idx" ON "trip" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "trip_pickup_gist" ON "trip" USING gist ("pickup_location");--> statement-breakpoint
CREATE UNIQUE INDEX "trip_order_uq" ON "trip" USING btree ("organization_id","order_id") WHERE order_id IS NOT NULL AND status <> 'cancelled';--> statement-breakpoint
CREATE UNIQUE INDEX "trip_express_uq" ON "trip" USING btree ("organization_id","express_request_id") WHERE express_request_id IS NOT NULL AND status <> 'cancelled';--> statement-breakpoint
CREATE UNIQUE INDEX "trip_recipient_link_live_uq" ON "trip_recipient_link" USING btree ("organization_id","trip_id") WHERE revoked_at IS NULL;--> statement-breakpoint
CREATE INDEX "sync_operation_created_idx" ON "sync_operation" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "driver_settlement_driver_idx" ON "driver_settlement" USING btree ("organization_id","driver_id","id");--> statement-breakpoint
CREATE INDEX "driver_settlement_item_settlement_idx" ON "driver_settlement_item" USING btree ("organization_id","settlement_id");--> statement-breakpoint
CREATE INDEX "merchant_payment_receipt_merchant_idx" ON "merchant_payment_receipt" USING btree ("organization_id","merchant_id");--> statement-breakpoint
CREATE INDEX "merchant_payment_review_merchant_idx" ON "merchant_payment_review" USING btree ("organization_id","merchant_id","status","id");--> statement-breakpoint
CREATE INDEX "merchant_payment_review_status_idx" ON "merchant_payment_review" USING btree ("organization_id","status","id");--> statement-breakpoint
CREATE INDEX "merchant_settlement_rule_due_idx" ON "merchant_settlement_rule" USING btree ("enabled","settled_through");--> statement-breakpoint
CREATE INDEX "merchant_wallet_entry_merchant_idx" ON "merchant_wallet_entry" USING btree ("organization_id","merchant_id","created_at","id");--> statement-breakpoint
CREATE INDEX "merchant_wallet_entry_type_idx" ON "merchant_wallet_entry" USING btree ("organization_id","entry_type","id");--> statement-breakpoint
CREATE INDEX "merchant_wallet_entry_order_idx" ON "merchant_wallet_entry" USING btree ("organization_id","order_id");--> statement-breakpoint
CREATE UNIQUE INDEX "merchant_wallet_entry_fee_order_uq" ON "merchant_wallet_entry" USING btree ("organization_id","order_id") WHERE entry_type = 'delivery_fee_debit';--> statement-breakpoint
CREATE UNIQUE INDEX "merchant_wallet_entry_fee_trip_uq" ON "merchant_wallet_entry" USING btree ("organization_id","trip_id") WHERE entry_type = 'delivery_fee_debit';--> statement-breakpoint
CREATE INDEX "device_user_idx" ON "device" USING btree ("organization_id","user_id");--> statement-breakpoint
CREATE INDEX "device_user_sync_idx" ON "device" USING btree ("organization_id","user_id","changed_xid");--> statement-breakpoint
CREATE INDEX "device_seen_idx" ON "device" USING btree ("organization_id","last_seen_at");--> statement-breakpoint
CREATE INDEX "notification_user_idx" ON "notification" USING btree ("organization_id","user_id","id");--> statement-breakpoint
CREATE INDEX "notification_user_unread_idx" ON "notification" USING btree ("organization_id","user_id","id") WHERE read_at IS NULL;--> statement-breakpoint
CREATE INDEX "notification_user_updated_idx" ON "notification" USING btree ("organization_id","user_id","updated_at");--> statement-breakpoint
CREATE INDEX "notification_user_sync_idx" ON "notification" USING btree ("organization_id","user_id","changed_xid");--> statement-breakpoint
CREATE INDEX "push_outbox_due_idx" ON "push_outbox" USING btree ("status","available_at");--> statement-breakpoint
CREATE INDEX "push_outbox_org_status_idx" ON "push_outbox" USING btree ("organization_id","status");--> statement-breakpoint
CREATE INDEX "operator_status_idx" ON "operator" USING btree ("status","id");--> statement-breakpoint
CREATE INDEX "private_storage_object_trip_idx" ON "private_storage_object" USING btree ("organization_id","trip_id");--> statement-breakpoint
CREATE INDEX "storage_upload_expiry_idx" ON "storage_upload" USING btree ("status","expires_at");--> statement-breakpoint
CREATE INDEX "banner_territory_territory_idx" ON "banner_territory" USING btree ("organization_id","territory_id");--> statement-breakpoint
CREATE INDEX "subadmin_profile_parent_idx" ON "subadmin_profile" USING btree ("organization_id","parent_subadmin_user_id");--> statement-breakpoint
CREATE INDEX "user_territory_territory_idx" ON "user_territory" USING btree ("organization_id","territory_id");