import { getTableColumns, type Table } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tx } from '../../src/platform/db/index.js';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newTrip } from './fixtures.js';
import { tripOut } from '../../src/modules/logistics/service/mappers.js';
import { findDriver } from '../../src/modules/logistics/repo/drivers.js';
import { findMerchant } from '../../src/modules/logistics/repo/merchants.js';
import { getSettings } from '../../src/modules/logistics/repo/settings.js';
import { findTerritory } from '../../src/modules/logistics/repo/territories.js';
import { findTrip, listTripRows } from '../../src/modules/logistics/repo/trips.js';
import { TripOutSchema } from '../../src/modules/logistics/schemas.js';
import { driver, logisticsSettings, merchant, territory, trip } from '../../src/modules/logistics/tables.js';

let t: TestApp;
let admin: Session;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
});
afterAll(() => t?.close());

/** The SQL names of a table's columns, without `omit`, with each point column replaced by its two number columns. */
function columnsOf(table: Table, omit: string[], points: Record<string, [string, string]> = {}): string[] {
  return Object.values(getTableColumns(table))
    .map((c) => c.name)
    .filter((n) => !omit.includes(n))
    .flatMap((n) => points[n] ?? [n]);
}

const inTenant = <T>(fn: (tx: Tx) => Promise<T>) => t.db.withTenant({ organizationId: t.demo.organizationId, userId: admin.userId }, fn);

describe('logistics repo rows', () => {
  it('a trip read returns every column of the trip table (points as numbers) and the joined users, nothing else', async () => {
    const created = await newTrip(t, admin);
    const row = (await inTenant(async (tx) => findTrip(tx, created.id)))!;
    const expected = [
      ...columnsOf(trip, ['changed_xid'], {
        pickup_location: ['pickup_lon', 'pickup_lat'],
        dropoff_location: ['dropoff_lon', 'dropoff_lat'],
      }),
      'driver_user_id',
      'merchant_user_id',
      'recipient_phone',
      'recipient_name',
    ];
    expect(Object.keys(row).sort()).toEqual(expected.sort());
    const listed = await inTenant(async (tx) =>
      listTripRows(
        tx,
        { status: null, driverId: null, territoryId: null, merchantId: null, orderId: null, from: null, to: null, after: null, limit: 1 },
        { scope: null },
      ),
    );
    expect(Object.keys(listed[0]!).sort()).toEqual(expected.sort());
  });

  it('tripOut gives every property of the TripOut schema (PINs shown to staff of a trip without merchant and customer)', async () => {
    const created = await newTrip(t, admin);
    const row = (await inTenant(async (tx) => findTrip(tx, created.id)))!;
    const out = tripOut(row, { userId: admin.userId, kind: 'administrator' });
    // organization_id is added to every resource schema and response in one place (platform/tenant-fields), not by mappers.
    const documented = Object.keys(TripOutSchema.properties).filter((k) => k !== 'organization_id');
    expect(Object.keys(out).sort()).toEqual(documented.sort());
  });

  it('driver, merchant, territory and settings reads return the columns of their tables', async () => {
    const d = await t.req(admin, { method: 'GET', url: '/drivers?limit=1' });
    const m = await t.req(admin, { method: 'GET', url: '/merchants?limit=1' });
    const ter = await t.req(admin, { method: 'GET', url: '/territories?limit=1' });
    const rows = await inTenant(async (tx) => ({
      driver: await findDriver(tx, d.json().data[0].id),
      merchant: await findMerchant(tx, m.json().data[0].id),
      territory: await findTerritory(tx, ter.json().data[0].id),
      settings: await getSettings(tx, t.demo.organizationId),
    }));
    // location_stale_at is the stale-GPS worker's marker; reads compute location_stale from the fix's age instead.
    const driverOmit = [
      'availability_locked_by_user_id',
      'availability_locked_at',
      'decided_by_user_id',
      'decided_at',
      'location_stale_at',
    ];
    expect(Object.keys(rows.driver!).sort()).toEqual(
      [
        ...columnsOf(driver, driverOmit, { last_location: ['last_lon', 'last_lat'] }),
        'display_name',
        'phone',
        'territory_ids',
        'location_stale',
      ].sort(),
    );
    expect(Object.keys(rows.merchant!).sort()).toEqual(
      columnsOf(merchant, ['decided_by_user_id', 'decided_at'], { location: ['lon', 'lat'] }).sort(),
    );
    expect(Object.keys(rows.territory!).sort()).toEqual(columnsOf(territory, ['organization_id', 'created_by_user_id']).sort());
    expect(Object.keys(rows.settings).sort()).toEqual(columnsOf(logisticsSettings, ['organization_id', 'updated_by_user_id']).sort());
  });
});
