CREATE TABLE "hub" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"address" text NOT NULL,
	"location" "point" NOT NULL,
	"territory_id" text NOT NULL,
	"opening_hours" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"created_by_user_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "hub_organization_id_id_pk" PRIMARY KEY("organization_id","id")
);
--> statement-breakpoint
ALTER TABLE "hub" ADD CONSTRAINT "hub_organization_id_territory_id_territory_organization_id_id_fk" FOREIGN KEY ("organization_id","territory_id") REFERENCES "public"."territory"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "hub_territory_idx" ON "hub" USING btree ("organization_id","territory_id","id");