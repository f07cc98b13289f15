CREATE TABLE "import_job" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"kind" text NOT NULL,
	"status" text NOT NULL,
	"dry_run" boolean NOT NULL,
	"mode" text NOT NULL,
	"merchant_id" text,
	"file_name" text,
	"format" text NOT NULL,
	"total_rows" integer NOT NULL,
	"processed_rows" integer DEFAULT 0 NOT NULL,
	"valid_rows" integer DEFAULT 0 NOT NULL,
	"created_rows" integer DEFAULT 0 NOT NULL,
	"duplicate_rows" integer DEFAULT 0 NOT NULL,
	"error_rows" integer DEFAULT 0 NOT NULL,
	"actor" jsonb NOT NULL,
	"created_by_user_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "import_job_organization_id_id_pk" PRIMARY KEY("organization_id","id")
);
--> statement-breakpoint
CREATE TABLE "import_ref" (
	"organization_id" text NOT NULL,
	"kind" text NOT NULL,
	"merchant_key" text NOT NULL,
	"external_ref" text NOT NULL,
	"entity_id" text,
	"import_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "import_ref_organization_id_kind_merchant_key_external_ref_pk" PRIMARY KEY("organization_id","kind","merchant_key","external_ref")
);
--> statement-breakpoint
CREATE TABLE "import_row" (
	"organization_id" text NOT NULL,
	"import_id" text NOT NULL,
	"row_number" integer NOT NULL,
	"external_ref" text,
	"status" text NOT NULL,
	"data" jsonb,
	"errors" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"entity_id" text,
	CONSTRAINT "import_row_organization_id_import_id_row_number_pk" PRIMARY KEY("organization_id","import_id","row_number")
);
--> statement-breakpoint
ALTER TABLE "import_job" ADD CONSTRAINT "import_job_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "import_ref" ADD CONSTRAINT "import_ref_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "import_row" ADD CONSTRAINT "import_row_organization_id_import_id_import_job_organization_id_id_fk" FOREIGN KEY ("organization_id","import_id") REFERENCES "public"."import_job"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "import_job_id_idx" ON "import_job" USING btree ("id");--> statement-breakpoint
CREATE INDEX "import_job_pending_idx" ON "import_job" USING btree ("created_at") WHERE status IN ('queued', 'running');