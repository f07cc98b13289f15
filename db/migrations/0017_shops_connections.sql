CREATE TABLE "shop_connection" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"platform" text NOT NULL,
	"shop_url" text NOT NULL,
	"branch_id" text,
	"secret" text,
	"secret_set_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "shop_connection_organization_id_id_pk" PRIMARY KEY("organization_id","id")
);
--> statement-breakpoint
CREATE TABLE "shop_delivery" (
	"organization_id" text NOT NULL,
	"connection_id" text NOT NULL,
	"delivery_id" text NOT NULL,
	"topic" text NOT NULL,
	"shop_order_id" text,
	"outcome" text NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "shop_delivery_organization_id_connection_id_delivery_id_pk" PRIMARY KEY("organization_id","connection_id","delivery_id")
);
--> statement-breakpoint
CREATE TABLE "shop_order" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"connection_id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"shop_order_id" text NOT NULL,
	"shop_order_number" text,
	"status" text NOT NULL,
	"customer_name" text NOT NULL,
	"customer_phone" text,
	"dropoff_address" text NOT NULL,
	"dropoff_location" "point",
	"package_description" text,
	"total" text,
	"currency" text,
	"express_request_id" text,
	"note" text,
	"shop_updated_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "shop_order_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "shop_order_shop_uq" UNIQUE("organization_id","connection_id","shop_order_id")
);
--> statement-breakpoint
ALTER TABLE "shop_connection" ADD CONSTRAINT "shop_connection_organization_id_merchant_id_merchant_organization_id_id_fk" FOREIGN KEY ("organization_id","merchant_id") REFERENCES "public"."merchant"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shop_delivery" ADD CONSTRAINT "shop_delivery_organization_id_connection_id_shop_connection_organization_id_id_fk" FOREIGN KEY ("organization_id","connection_id") REFERENCES "public"."shop_connection"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shop_order" ADD CONSTRAINT "shop_order_organization_id_connection_id_shop_connection_organization_id_id_fk" FOREIGN KEY ("organization_id","connection_id") REFERENCES "public"."shop_connection"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "shop_connection_id_idx" ON "shop_connection" USING btree ("id");--> statement-breakpoint
CREATE INDEX "shop_connection_merchant_idx" ON "shop_connection" USING btree ("organization_id","merchant_id","id");--> statement-breakpoint
CREATE INDEX "shop_order_merchant_idx" ON "shop_order" USING btree ("organization_id","merchant_id","id");