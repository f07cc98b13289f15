import { and, desc, eq, isNull, lt, sql } from 'drizzle-orm';
import type { Tx } from '../../../platform/db/index.js';
import { gpsDevice } from '../tables.js';

export type GpsDeviceRecord = typeof gpsDevice.$inferSelect;

export async function insertGpsDevice(tx: Tx, row: typeof gpsDevice.$inferInsert): Promise<GpsDeviceRecord> {
  const [out] = await tx.orm.insert(gpsDevice).values(row).returning();
  return out;
}

export async function listGpsDevices(tx: Tx, driverId: string, f: { after: string | null; limit: number }): Promise<GpsDeviceRecord[]> {
  return tx.orm
    .select()
    .from(gpsDevice)
    .where(and(eq(gpsDevice.driverId, driverId), f.after ? lt(gpsDevice.id, f.after) : undefined))
    .orderBy(desc(gpsDevice.id))
    .limit(f.limit + 1);
}

export async function getGpsDevice(tx: Tx, driverId: string, id: string): Promise<GpsDeviceRecord | null> {
  const rows = await tx.orm
    .select()
    .from(gpsDevice)
    .where(and(eq(gpsDevice.driverId, driverId), eq(gpsDevice.id, id)))
    .for('update');
  return rows[0] ?? null;
}

export async function revokeGpsDevice(tx: Tx, id: string): Promise<void> {
  await tx.orm
    .update(gpsDevice)
    .set({ revokedAt: sql`now()` })
    .where(eq(gpsDevice.id, id));
}

/** Across organizations (the token names its device): the live device with this id, for authentication. */
export async function liveGpsDevice(tx: Tx, id: string): Promise<GpsDeviceRecord | null> {
  const rows = await tx.orm
    .select()
    .from(gpsDevice)
    .where(and(eq(gpsDevice.id, id), isNull(gpsDevice.revokedAt)));
  return rows[0] ?? null;
}

export async function touchGpsDevice(tx: Tx, id: string): Promise<void> {
  await tx.orm
    .update(gpsDevice)
    .set({ lastSeenAt: sql`now()` })
    .where(eq(gpsDevice.id, id));
}
