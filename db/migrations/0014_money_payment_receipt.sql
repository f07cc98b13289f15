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
CREATE INDEX "merchant_payment_receipt_merchant_idx" ON "merchant_payment_receipt" USING btree ("organization_id","merchant_id");