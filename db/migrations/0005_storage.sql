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
ALTER TABLE "private_storage_object" ADD CONSTRAINT "private_storage_object_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "private_storage_object" ADD CONSTRAINT "private_storage_object_organization_id_created_by_user_id_users_organization_id_id_fk" FOREIGN KEY ("organization_id","created_by_user_id") REFERENCES "public"."users"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "private_storage_object" ADD CONSTRAINT "private_storage_object_organization_id_upload_id_storage_upload_organization_id_id_fk" FOREIGN KEY ("organization_id","upload_id") REFERENCES "public"."storage_upload"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "storage_upload" ADD CONSTRAINT "storage_upload_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "storage_upload" ADD CONSTRAINT "storage_upload_organization_id_created_by_user_id_users_organization_id_id_fk" FOREIGN KEY ("organization_id","created_by_user_id") REFERENCES "public"."users"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "private_storage_object_trip_idx" ON "private_storage_object" USING btree ("organization_id","trip_id");--> statement-breakpoint
CREATE INDEX "storage_upload_expiry_idx" ON "storage_upload" USING btree ("status","expires_at");