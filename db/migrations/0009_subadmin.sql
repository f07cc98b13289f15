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
ALTER TABLE "banner_territory" ADD CONSTRAINT "banner_territory_organization_id_banner_id_zone_banner_organization_id_id_fk" FOREIGN KEY ("organization_id","banner_id") REFERENCES "public"."zone_banner"("organization_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "banner_territory" ADD CONSTRAINT "banner_territory_organization_id_territory_id_territory_organization_id_id_fk" FOREIGN KEY ("organization_id","territory_id") REFERENCES "public"."territory"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "subadmin_profile" ADD CONSTRAINT "subadmin_profile_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "subadmin_profile" ADD CONSTRAINT "subadmin_profile_organization_id_user_id_users_organization_id_id_fk" FOREIGN KEY ("organization_id","user_id") REFERENCES "public"."users"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "subadmin_profile" ADD CONSTRAINT "subadmin_profile_organization_id_parent_subadmin_user_id_subadmin_profile_organization_id_user_id_fk" FOREIGN KEY ("organization_id","parent_subadmin_user_id") REFERENCES "public"."subadmin_profile"("organization_id","user_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_territory" ADD CONSTRAINT "user_territory_organization_id_user_id_users_organization_id_id_fk" FOREIGN KEY ("organization_id","user_id") REFERENCES "public"."users"("organization_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_territory" ADD CONSTRAINT "user_territory_organization_id_territory_id_territory_organization_id_id_fk" FOREIGN KEY ("organization_id","territory_id") REFERENCES "public"."territory"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "banner_territory_territory_idx" ON "banner_territory" USING btree ("organization_id","territory_id");--> statement-breakpoint
CREATE INDEX "subadmin_profile_parent_idx" ON "subadmin_profile" USING btree ("organization_id","parent_subadmin_user_id");--> statement-breakpoint
CREATE INDEX "user_territory_territory_idx" ON "user_territory" USING btree ("organization_id","territory_id");