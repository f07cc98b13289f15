ALTER TABLE "driver" ADD COLUMN "last_track_ended_at" timestamp with time zone;--> statement-breakpoint
UPDATE "driver" d SET "last_track_ended_at" = k.ended_at
  FROM (SELECT organization_id, driver_id, max(ended_at) AS ended_at FROM "trip_track" GROUP BY organization_id, driver_id) k
 WHERE d.organization_id = k.organization_id AND d.id = k.driver_id;
