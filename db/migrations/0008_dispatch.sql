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
ALTER TABLE "dispatch_plan" ADD CONSTRAINT "dispatch_plan_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "dispatch_plan_status_idx" ON "dispatch_plan" USING btree ("organization_id","status","expires_at");