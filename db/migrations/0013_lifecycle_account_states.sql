ALTER TABLE "driver" ADD COLUMN "availability_locked" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "driver" ADD COLUMN "availability_lock_reason" text;--> statement-breakpoint
ALTER TABLE "driver" ADD COLUMN "availability_locked_by_user_id" text;--> statement-breakpoint
ALTER TABLE "driver" ADD COLUMN "availability_locked_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "driver" ADD CONSTRAINT "driver_status_ck" CHECK ("driver"."status" in ('pending', 'approved', 'rejected', 'suspended'));--> statement-breakpoint
ALTER TABLE "merchant" ADD CONSTRAINT "merchant_status_ck" CHECK ("merchant"."status" in ('pending', 'approved', 'rejected', 'suspended'));