import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newCustomer, newShop, ok, orderIn, placeOrder, cart, rows, setStatus, type Shop } from '../commerce/fixtures.js';
import { newDriver, type TestDriver } from '../logistics/fixtures.js';
import { png } from '../storage/fixtures.js';

/** Cross-module contributions to the mobile API: sync entities of logistics and commerce, and the storage health section. */
let t: TestApp;
let admin: Session;
let shop: Shop;
let otherShop: Shop;
let customer: Awaited<ReturnType<typeof newCustomer>>;
let otherCustomer: Awaited<ReturnType<typeof newCustomer>>;
let driver: TestDriver;
let otherDriver: TestDriver;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  shop = await newShop(t, ['10.00', '4.50']);
  otherShop = await newShop(t, ['7.00']);
  customer = await newCustomer(t);
  otherCustomer = await newCustomer(t);
  driver = await newDriver(t, { lon: -68.135, lat: -16.5 }, { capacity: 5, admin });
  otherDriver = await newDriver(t, { lon: -68.135, lat: -16.5 }, { capacity: 5, admin });
});
afterAll(() => t?.close());

type Pull = { cursor: string; entities: Record<string, { changed: { id: string; [k: string]: unknown }[]; deleted: { id: string }[] }> };
const pull = async (s: Session, cursor?: string): Promise<Pull> =>
  ok(await t.req(s, { method: 'GET', url: `/mobile/sync/pull${cursor ? `?cursor=${cursor}` : ''}` }));
const ids = (p: Pull, entity: string) => p.entities[entity].changed.map((x) => x.id);

describe('sync entities of commerce and logistics', () => {
  it('each role gets its own entities: driver trips; merchant orders and catalog; customer orders and addresses', async () => {
    expect(Object.keys((await pull(driver.session)).entities)).toEqual(expect.arrayContaining(['trips']));
    expect(Object.keys((await pull(driver.session)).entities)).not.toEqual(expect.arrayContaining(['orders']));
    const m = Object.keys((await pull(shop.merchant)).entities);
    expect(m).toEqual(expect.arrayContaining(['orders', 'catalog_items']));
    expect(m).not.toContain('trips');
    expect(m).not.toContain('addresses');
    const c = Object.keys((await pull(customer.session)).entities);
    expect(c).toEqual(expect.arrayContaining(['orders', 'addresses']));
    expect(c).not.toContain('catalog_items');
    expect(c).not.toContain('trips');
  });

  it('first sync: current rows of the caller only', async () => {
    const m = await pull(shop.merchant);
    expect(ids(m, 'catalog_items').sort()).toEqual(shop.items.map((i) => i.id).sort());
    const c = await pull(customer.session);
    expect(c.entities.addresses.changed).toEqual([
      expect.objectContaining({ id: customer.addressId, location: expect.objectContaining({ type: 'Point' }) }),
    ]);
    expect(c.entities.orders.changed).toEqual([]);
  });

  it("pulls after the cursor: order placed and moved, catalog change, address added, trip assigned; never another user's rows", async () => {
    const [m0, c0, d0] = await Promise.all([pull(shop.merchant), pull(customer.session), pull(driver.session)]);
    const order = await placeOrder(t, customer.session, cart(shop, customer.addressId));
    const foreign = await placeOrder(t, otherCustomer.session, cart(otherShop, otherCustomer.addressId));
    ok(await setStatus(t, shop.merchant, order.id, 'confirmed'));
    ok(await t.req(shop.merchant, { method: 'PATCH', url: `/merchant/catalog/${shop.items[1].id}`, payload: { price: '4.75' } }));
    const addr = ok(
      await t.req(customer.session, {
        method: 'POST',
        url: '/customer/addresses',
        payload: { address: 'Calle 2', location: { type: 'Point', coordinates: [-68.12, -16.52] } },
      }),
      201,
    );

    const m1 = await pull(shop.merchant, m0.cursor);
    expect(ids(m1, 'orders')).toEqual([order.id]);
    expect(m1.entities.orders.changed[0]).toMatchObject({ status: 'confirmed', customer_user_id: customer.userId });
    expect(m1.entities.catalog_items.changed).toEqual([expect.objectContaining({ id: shop.items[1].id, price: '4.75' })]);
    const c1 = await pull(customer.session, c0.cursor);
    expect(ids(c1, 'orders')).toEqual([order.id]);
    expect(ids(c1, 'addresses')).toEqual([addr.id]);
    expect(ids(await pull(otherCustomer.session, c0.cursor), 'orders')).toEqual([foreign.id]);

    // The order becomes ready (commerce creates its trip); dispatch assigns our driver.
    const readyOrder = await orderIn(t, shop, customer, 'ready');
    const tripId = (await rows(t, 'SELECT trip_id FROM merchant_order WHERE id = $1', [readyOrder]))[0].trip_id as string;
    expect(ids(await pull(driver.session, d0.cursor), 'trips')).toEqual([]);
    ok(await t.req(admin, { method: 'POST', url: `/trips/${tripId}/assign`, payload: { driver_id: driver.id } }));
    const d1 = await pull(driver.session, d0.cursor);
    expect(d1.entities.trips.changed).toEqual([expect.objectContaining({ id: tripId, status: 'assigned' })]);
    expect(d1.entities.trips.deleted).toEqual([]);
    expect(ids(await pull(otherDriver.session, d0.cursor), 'trips')).toEqual([]);
    // Accepting changes the trip again: it comes back after the last cursor.
    ok(await t.req(driver.session, { method: 'POST', url: `/driver/trips/${tripId}/accept` }));
    const d2 = await pull(driver.session, d1.cursor);
    expect(d2.entities.trips.changed).toEqual([expect.objectContaining({ id: tripId, status: 'accepted' })]);
  });

  it('another organization sees nothing of ours', async () => {
    const other = await t.newOrganization();
    const p = await pull(await t.login(other.logins.merchant));
    expect(p.entities.orders?.changed ?? []).toEqual([]);
    expect(p.entities.catalog_items?.changed ?? []).toEqual([]);
  });
});

describe('mobile health: storage section', () => {
  it('objects and bytes per purpose and open slots of the organization, from the storage module', async () => {
    const bytes = png(5);
    const slot = ok(
      await t.req(customer.session, {
        method: 'POST',
        url: '/storage/generic/uploads',
        payload: { purpose: 'avatar', mime_type: 'image/png', size_bytes: bytes.length, filename: 'a.png' },
      }),
      201,
    );
    ok(
      await t.req(customer.session, {
        method: 'PUT',
        url: `/storage/uploads/${slot.upload_id}`,
        payload: bytes,
        headers: { 'content-type': 'image/png', 'x-upload-token': slot.upload_token },
      }),
      201,
    );
    ok(
      await t.req(customer.session, {
        method: 'POST',
        url: '/storage/generic/uploads',
        payload: { purpose: 'document', mime_type: 'application/pdf', size_bytes: 100, filename: 'd.pdf' },
      }),
      201,
    );

    const h = ok(await t.req(admin, { method: 'GET', url: '/admin/mobile-health' }));
    const byPurpose = await rows(
      t,
      'SELECT purpose, count(*)::int AS objects, sum(size_bytes)::int AS bytes FROM private_storage_object WHERE organization_id = $1 GROUP BY purpose ORDER BY purpose',
      [t.demo.organizationId],
    );
    const [open] = await rows(
      t,
      "SELECT count(*)::int AS n FROM storage_upload WHERE organization_id = $1 AND status IN ('open', 'uploading') AND expires_at > now()",
      [t.demo.organizationId],
    );
    expect(h.storage).toEqual({
      status: 'ok',
      objects: byPurpose.reduce((n, r) => n + r.objects, 0),
      bytes: byPurpose.reduce((n, r) => n + r.bytes, 0),
      by_purpose: byPurpose,
      open_slots: open.n,
    });
    expect(h.storage.by_purpose).toEqual(expect.arrayContaining([{ purpose: 'avatar', objects: 1, bytes: bytes.length }]));
    expect(h.storage.open_slots).toBeGreaterThanOrEqual(1);
    // Another organization: its own (empty) figures.
    const other = await t.newOrganization();
    const oh = ok(await t.req(await t.login(other.logins.admin), { method: 'GET', url: '/admin/mobile-health' }));
    expect(oh.storage).toEqual({ status: 'ok', objects: 0, bytes: 0, by_purpose: [], open_slots: 0 });
  });
});
