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
ALTER TABLE "driver_settlement" ADD CONSTRAINT "driver_settlement_organization_id_driver_id_driver_organization_id_id_fk" FOREIGN KEY ("organization_id","driver_id") REFERENCES "public"."driver"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "driver_settlement_item" ADD CONSTRAINT "driver_settlement_item_organization_id_settlement_id_driver_settlement_organization_id_id_fk" FOREIGN KEY ("organization_id","settlement_id") REFERENCES "public"."driver_settlement"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant_payment_profile" ADD CONSTRAINT "merchant_payment_profile_organization_id_merchant_id_merchant_organization_id_id_fk" FOREIGN KEY ("organization_id","merchant_id") REFERENCES "public"."merchant"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant_payment_review" ADD CONSTRAINT "merchant_payment_review_organization_id_merchant_id_merchant_organization_id_id_fk" FOREIGN KEY ("organization_id","merchant_id") REFERENCES "public"."merchant"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant_settlement" ADD CONSTRAINT "merchant_settlement_organization_id_merchant_id_merchant_organization_id_id_fk" FOREIGN KEY ("organization_id","merchant_id") REFERENCES "public"."merchant"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant_settlement_rule" ADD CONSTRAINT "merchant_settlement_rule_organization_id_merchant_id_merchant_organization_id_id_fk" FOREIGN KEY ("organization_id","merchant_id") REFERENCES "public"."merchant"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchant_wallet_entry" ADD CONSTRAINT "merchant_wallet_entry_organization_id_merchant_id_merchant_organization_id_id_fk" FOREIGN KEY ("organization_id","merchant_id") REFERENCES "public"."merchant"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "driver_settlement_driver_idx" ON "driver_settlement" USING btree ("organization_id","driver_id","id");--> statement-breakpoint
CREATE INDEX "driver_settlement_item_settlement_idx" ON "driver_settlement_item" USING btree ("organization_id","settlement_id");--> statement-breakpoint
CREATE INDEX "merchant_payment_review_merchant_idx" ON "merchant_payment_review" USING btree ("organization_id","merchant_id","status","id");--> statement-breakpoint
CREATE INDEX "merchant_payment_review_status_idx" ON "merchant_payment_review" USING btree ("organization_id","status","id");--> statement-breakpoint
CREATE INDEX "merchant_settlement_rule_due_idx" ON "merchant_settlement_rule" USING btree ("enabled","settled_through");--> statement-breakpoint
CREATE INDEX "merchant_wallet_entry_merchant_idx" ON "merchant_wallet_entry" USING btree ("organization_id","merchant_id","created_at","id");--> statement-breakpoint
CREATE INDEX "merchant_wallet_entry_type_idx" ON "merchant_wallet_entry" USING btree ("organization_id","entry_type","id");--> statement-breakpoint
CREATE INDEX "merchant_wallet_entry_order_idx" ON "merchant_wallet_entry" USING btree ("organization_id","order_id");--> statement-breakpoint
CREATE UNIQUE INDEX "merchant_wallet_entry_fee_order_uq" ON "merchant_wallet_entry" USING btree ("organization_id","order_id") WHERE entry_type = 'delivery_fee_debit';--> statement-breakpoint
CREATE UNIQUE INDEX "merchant_wallet_entry_fee_trip_uq" ON "merchant_wallet_entry" USING btree ("organization_id","trip_id") WHERE entry_type = 'delivery_fee_debit';