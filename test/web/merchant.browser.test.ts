import { deflateSync } from 'node:zlib';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext } from 'playwright-core';
import { api, login } from '../hardening/server-process.js';
import { logIn, skipBrowser, startRig, type BrowserRig, phoneFit } from './browser.js';

/**
 * The merchant's counter (/merchant) in a real browser at tablet size: Playwright (playwright-core) driving Debian's
 * chromium against the real server on the embedded database with the demo seed. Customers, dispatch and drivers act
 * through the API; the merchant only through the page. Screenshots go to test-artifacts/merchant-*.png (gitignored).
 */

const SKIP = skipBrowser('test/web/merchant.browser.test.ts');

/** A small valid PNG (an RGB gradient), for the photo upload. */
function png(width: number, height: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Buffer) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type), data]);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, c]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1);
    for (let x = 0; x < width; x++) raw.set([(x * 255) / width, (y * 255) / height, 128], row + 1 + x * 3);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe.skipIf(SKIP)('merchant counter in chromium', () => {
  let rig: BrowserRig;

  beforeAll(async () => {
    rig = await startRig('merchant-browser', { shots: 'merchant-' });
  }, 300_000);

  afterAll(async () => {
    await rig?.close();
  });

  it('takes an order from ring to delivery, edits the catalog with a photo, keeps the orders through a network cut; bad input changes nothing', async () => {
    const base = rig.base;
    const [admin, merchant, customer, driverToken] = await Promise.all([
      login(base, 'admin@demo.test'),
      login(base, 'merchant@demo.test'),
      login(base, 'customer@demo.test'),
      login(base, 'driver@demo.test'),
    ]);
    const branches = (await api(base, merchant, 'GET', '/merchant/branches')).body.data;
    const branch = branches[0];
    const items = (await api(base, merchant, 'GET', '/merchant/catalog')).body.data as { id: string; name: string; price: string }[];
    const address = (await api(base, customer, 'GET', '/customer/addresses')).body.data[0];
    const driver = (await api(base, admin, 'GET', '/drivers?status=approved')).body.data[0];
    expect((await api(base, admin, 'PATCH', `/drivers/${driver.id}`, { capacity: 5 })).status).toBe(200);
    const order = async (notes: string) => {
      const r = await api(base, customer, 'POST', '/customer/orders', {
        branch_id: branch.id,
        address_id: address.id,
        items: [{ catalog_item_id: items[0].id, quantity: 2 }],
        payment_destination: 'cash',
        notes,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body as { id: string; total: string };
    };
    /** The driver app's part, through the API: assigned, accepted, pickup PIN (from the merchant), on the way. */
    const pickUp = async (tripId: string) => {
      expect((await api(base, admin, 'POST', `/trips/${tripId}/assign`, { driver_id: driver.id })).status).toBe(200);
      expect((await api(base, driverToken, 'POST', `/driver/trips/${tripId}/accept`)).status).toBe(200);
      const pin = (await api(base, merchant, 'GET', `/trips/${tripId}`)).body.pickup_pin;
      expect((await api(base, driverToken, 'POST', `/trips/${tripId}/verify-pickup`, { pin })).status).toBe(200);
      expect((await api(base, driverToken, 'POST', `/driver/trips/${tripId}/start-delivery`)).status).toBe(200);
    };

    const context: BrowserContext = await rig.browser.newContext({
      viewport: { width: 1280, height: 800 },
      locale: 'es-BO',
      hasTouch: true,
    });
    const page = await context.newPage();
    rig.watch(page);
    const res = await page.goto(`${base}/merchant`);
    expect(res!.status()).toBe(200);
    expect(res!.headers()['content-security-policy']).toContain("script-src 'self'");

    // Only merchant users: a customer is told where to go and stays logged out.
    await logIn(page, 'customer@demo.test');
    await expect.poll(() => page.locator('#login-error').textContent()).toContain('Esta página es para comercios');
    await rig.shot(page, '01-login-refused');
    await logIn(page, 'merchant@demo.test');
    await page.locator('#live[data-live="true"]').waitFor();

    // A customer orders: the order rings on the counter with its items, notes, payment and what to collect.
    const first = await order('Sin cebolla, por favor');
    const card = (id: string) => page.locator(`.order[data-order-id="${id}"]`);
    await card(first.id).waitFor();
    await page.locator('#ringing[data-count="1"]:not([hidden])').waitFor();
    expect(await card(first.id).locator('.notes').textContent()).toContain('Sin cebolla');
    expect(await card(first.id).locator('.destination').textContent()).toBe('Efectivo');
    expect(await card(first.id).locator('.collect').textContent()).toContain('cobra');
    expect(await card(first.id).locator('.lines li').first().textContent()).toContain(`2 × ${items[0].name}`);
    await rig.shot(page, '02-ringing');

    // Reject needs a reason: without one nothing changes.
    await card(first.id).locator('button.reject').click();
    await expect.poll(() => page.locator('.toast.error').last().textContent()).toContain('motivo');
    expect(
      (await api(base, merchant, 'GET', '/merchant/orders?status=pending_confirmation')).body.data.map((o: { id: string }) => o.id),
    ).toContain(first.id);

    // Accept (it stops ringing), then ready: the trip appears with the pickup PIN.
    await card(first.id).locator('button.accept').click();
    await page.locator(`.order[data-order-id="${first.id}"][data-status="preparing"]`).waitFor();
    await page.locator('#ringing[hidden]').waitFor({ state: 'attached' });
    await card(first.id).locator('button.ready').click();
    await page.locator(`.order[data-order-id="${first.id}"][data-status="ready"] .trip[data-trip-status="pending"]`).waitFor();
    const tripId = (await card(first.id).locator('.trip').getAttribute('data-trip-id'))!;
    expect(await card(first.id).locator('.pin-inline').textContent()).toMatch(/\d{4}/);
    // The promise made at checkout, carried by the trip.
    const promised = (await api(base, merchant, 'GET', `/trips/${tripId}`)).body.promised_at;
    expect(promised).toBeTruthy();
    await card(first.id).locator('.promised-at').waitFor();
    await rig.shot(page, '03-ready-trip');

    // A driver delivers through the API: the trip moves on the counter, then the order leaves the open list.
    await pickUp(tripId);
    await page.locator(`.order[data-order-id="${first.id}"][data-status="in_delivery"] .trip[data-trip-status="in_transit"]`).waitFor();
    const deliveryPin = (await api(base, customer, 'GET', `/trips/${tripId}`)).body.delivery_pin;
    // A cash order: the driver records the cash taken at the door (the trip's cash_to_collect).
    const cashDue = (await api(base, merchant, 'GET', `/trips/${tripId}`)).body.cash_to_collect as string | null | undefined;
    const deliverBody = cashDue && Number(cashDue) > 0 ? { pin: deliveryPin, cash_collected: cashDue } : { pin: deliveryPin };
    expect((await api(base, driverToken, 'POST', `/trips/${tripId}/verify-delivery`, deliverBody)).status).toBe(200);
    await page.locator(`.order[data-order-id="${first.id}"]`).waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Historial' }).click();
    await page.locator(`.order[data-order-id="${first.id}"][data-status="delivered"]`).waitFor();

    // The wallet shows the order's entries. A cash order the platform's driver collected: no debt; the merchant's net (total less
    // commission and delivery fee) is pending until the driver hands the cash in.
    await page.goto(`${base}/merchant#/money`);
    await page.locator(`#entries tr[data-order-id="${first.id}"][data-entry-type="platform_commission"]`).waitFor();
    await page.locator(`#entries tr[data-order-id="${first.id}"][data-entry-type="delivery_fee_debit"]`).waitFor();
    const wallet = (await api(base, merchant, 'GET', '/merchant/wallet')).body.wallet;
    const stat = cashDue && Number(cashDue) > 0 ? 'pending' : 'debt';
    expect(Number(wallet[stat])).toBeGreaterThan(0);
    expect(await page.locator(`[data-stat="${stat}"] strong`).textContent()).toContain(
      Number(wallet[stat]).toLocaleString('es-BO', { minimumFractionDigits: 2 }),
    );
    await rig.shot(page, '04-money');

    // Catalog: a price with three decimals and a file that is not an image are refused in Spanish, nothing changes.
    await page.goto(`${base}/merchant#/catalog`);
    const item = page.locator(`.item[data-item-id="${items[1].id}"]`);
    await item.locator('button.edit').click();
    const dialog = page.locator('#item-dialog');
    await dialog.getByLabel('Precio').fill('12.345');
    await dialog.getByRole('button', { name: 'Guardar' }).click();
    await expect.poll(() => dialog.locator('.form-error').textContent()).toContain('hasta dos decimales');
    await dialog.getByLabel('Foto').setInputFiles({ name: 'menu.png', mimeType: 'text/plain', buffer: Buffer.from('not a picture') });
    await expect.poll(() => dialog.locator('.form-error').textContent()).toContain('JPEG, PNG o WebP');
    await dialog.getByLabel('Foto').setInputFiles({ name: 'fake.png', mimeType: 'image/png', buffer: Buffer.from('still not a picture') });
    await expect.poll(() => dialog.locator('.form-error').textContent()).toContain('JPEG, PNG o WebP');
    const unchanged = (await api(base, merchant, 'GET', '/merchant/catalog')).body.data.find((x: { id: string }) => x.id === items[1].id);
    expect(unchanged).toMatchObject({ price: items[1].price, image_object_id: null });
    // A real photo (2,000 × 1,500) is resized in the browser and stored with the new price.
    await dialog.getByLabel('Foto').setInputFiles({ name: 'plato.png', mimeType: 'image/png', buffer: png(2000, 1500) });
    await dialog.locator('img.thumb:not([hidden])').waitFor();
    await dialog.getByLabel('Precio').fill('14,50');
    await dialog.getByRole('button', { name: 'Guardar' }).click();
    await page.locator(`.item[data-item-id="${items[1].id}"] img.thumb[data-loaded="true"]`).waitFor();
    const edited = (await api(base, merchant, 'GET', '/merchant/catalog')).body.data.find((x: { id: string }) => x.id === items[1].id);
    expect(edited.price).toBe('14.50');
    const stored = await fetch(`${base}/api/v1/storage/objects/${edited.image_object_id}`, {
      headers: { authorization: `Bearer ${merchant}` },
    });
    expect(stored.headers.get('content-type')).toContain('image/jpeg');
    const bytes = Buffer.from(await stored.arrayBuffer());
    expect(bytes.subarray(0, 2).toString('hex')).toBe('ffd8');
    expect(bytes.length).toBeLessThan(png(2000, 1500).length);
    // Sold out now: the toggle writes at once.
    await item.locator('input.switch').uncheck();
    await page.locator(`.item[data-item-id="${items[1].id}"][data-available="false"]`).waitFor();
    await expect
      .poll(async () => (await api(base, merchant, 'GET', `/merchant/catalog?available=false`)).body.data.map((x: { id: string }) => x.id))
      .toContain(items[1].id);
    await item.locator('input.switch').check();
    await page.locator(`.item[data-item-id="${items[1].id}"][data-available="true"]`).waitFor();
    await rig.shot(page, '05-catalog');

    // Branches: open at a glance; closing before opening without "past midnight" is refused, nothing changes; an overnight range saves.
    await page.goto(`${base}/merchant#/branches`);
    const b = page.locator(`.branch[data-branch-id="${branch.id}"]`);
    await b.waitFor();
    expect(await b.getAttribute('data-open')).toBe(String(branch.open_now));
    const hoursBefore = (await api(base, merchant, 'GET', '/merchant/branches')).body.data[0].opening_hours;
    await b.locator('button.add-range').click();
    const row = b.locator('.range').last();
    await row.locator('.r-open').fill('20:00');
    await row.locator('.r-close').fill('02:00');
    await b.getByRole('button', { name: 'Guardar' }).click();
    await expect.poll(() => b.locator('.form-error').textContent()).toContain('no es después de la apertura');
    expect((await api(base, merchant, 'GET', '/merchant/branches')).body.data[0].opening_hours).toEqual(hoursBefore);
    await row.locator('.r-overnight').check();
    await b.getByRole('button', { name: 'Guardar' }).click();
    await expect
      .poll(async () => (await api(base, merchant, 'GET', '/merchant/branches')).body.data[0].opening_hours)
      .toContainEqual({ day: 1, open: '20:00', close: '02:00' });
    await page.locator(`.branch[data-branch-id="${branch.id}"] .badge`).waitFor();
    await rig.shot(page, '06-branches');

    // The network is cut: orders placed meanwhile show up once it is back, each once.
    await page.goto(`${base}/merchant#/orders`);
    await page.getByRole('button', { name: 'En curso' }).click();
    await page.locator('#live[data-live="true"]').waitFor();
    await context.setOffline(true);
    await page.locator('#live[data-live="false"]').waitFor();
    const during = [await order('Pedido durante el corte 1'), await order('Pedido durante el corte 2')];
    await context.setOffline(false);
    await page.locator('#live[data-live="true"]').waitFor();
    for (const o of during) await card(o.id).waitFor();
    for (const o of during) expect(await card(o.id).count()).toBe(1);
    await page.locator('#ringing[data-count="2"]:not([hidden])').waitFor();
    await page.locator('#seen').click();
    await page.locator('#ringing[hidden]').waitFor({ state: 'attached' });
    const openIds = (await api(base, merchant, 'GET', '/merchant/orders?status=pending_confirmation')).body.data
      .map((o: { id: string }) => o.id)
      .sort();
    expect(
      (
        await page
          .locator('.order[data-status="pending_confirmation"]')
          .evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.orderId))
      ).sort(),
    ).toEqual(openIds);

    // A failed delivery coming back shows as such with its reason.
    const second = during[0];
    await card(second.id).locator('button.accept').click();
    await page.locator(`.order[data-order-id="${second.id}"][data-status="preparing"]`).waitFor();
    await card(second.id).locator('button.ready').click();
    await page.locator(`.order[data-order-id="${second.id}"] .trip`).waitFor();
    const trip2 = (await card(second.id).locator('.trip').getAttribute('data-trip-id'))!;
    await pickUp(trip2);
    const failed = await api(base, driverToken, 'POST', `/driver/trips/${trip2}/fail-delivery`, {
      reason: 'recipient_absent',
      note: 'Nadie en casa',
    });
    expect(failed.status, JSON.stringify(failed.body)).toBe(200);
    await page.locator(`.order[data-order-id="${second.id}"].failed .failure`).waitFor();
    expect(await card(second.id).locator('.failure').textContent()).toContain('destinatario ausente');
    await rig.shot(page, '07-failed-delivery');

    // Express: a request needs the recipient's phone; created, its trip shows and the tracking link can be shared.
    await page.goto(`${base}/merchant#/express`);
    const xf = page.locator('#express-form');
    await xf.getByLabel('Nombre del destinatario').fill('Ana Pérez');
    await xf.getByLabel('Dirección de entrega').fill('Calle Express 9');
    await xf.getByLabel('Latitud').fill('-16.51');
    await xf.getByLabel('Longitud').fill('-68.12');
    await xf.getByRole('button', { name: 'Crear' }).click();
    await expect.poll(() => xf.locator('.form-error').textContent()).toContain('teléfono');
    expect((await api(base, merchant, 'GET', '/merchant/delivery-express')).body.data).toHaveLength(0);
    await xf.getByLabel('Teléfono del destinatario').fill('71234567');
    await xf.getByRole('button', { name: 'Crear' }).click();
    const xcard = page.locator('.card-x[data-express-id]').first();
    await xcard.waitFor();
    expect(await xcard.getAttribute('data-trip-id')).toMatch(/.+/);
    await xcard.locator('button.share').click();
    await expect.poll(() => xcard.locator('output.link').textContent()).toMatch(/\/public\/tracking\/./);
    await rig.shot(page, '08-express');

    // English, and the session survives a restart of the page.
    await page.locator('#lang').selectOption('en');
    await page.getByRole('link', { name: 'Orders' }).click();
    await page.reload();
    await page.locator('#live[data-live="true"]').waitFor();
    expect(await page.locator('#login-title').count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Money' }).count()).toBe(1);
    await rig.shot(page, '09-english');
    await context.close();
    expect(rig.problems).toEqual([]);
  }, 600_000);

  it('accepts with a preparation time and shows the promise, marks an order at risk and late, shows the cash drivers hold and the entries in the page language, downloads the period workbook; loads the map only with a map; fits a phone', async () => {
    const base = rig.base;
    const [admin, merchant, customer, driverToken] = await Promise.all([
      login(base, 'admin@demo.test'),
      login(base, 'merchant@demo.test'),
      login(base, 'customer@demo.test'),
      login(base, 'driver@demo.test'),
    ]);
    const branch = (await api(base, merchant, 'GET', '/merchant/branches')).body.data[0];
    const items = (await api(base, merchant, 'GET', '/merchant/catalog')).body.data as { id: string; name: string }[];
    const address = (await api(base, customer, 'GET', '/customer/addresses')).body.data[0];
    const driver = (await api(base, admin, 'GET', '/drivers?status=approved')).body.data[0];
    const order = async (notes: string) => {
      const r = await api(base, customer, 'POST', '/customer/orders', {
        branch_id: branch.id,
        address_id: address.id,
        items: [{ catalog_item_id: items[0].id, quantity: 1 }],
        payment_destination: 'cash',
        notes,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body as { id: string; total: string; promised_at: string };
    };

    // First load: the counter's scripts without Leaflet (fetched with the first map).
    const html = await (await fetch(`${base}/merchant/`)).text();
    const scripts = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
    let gz = 0;
    for (const s of scripts)
      gz += Number((await fetch(`${base}${s}`, { headers: { 'accept-encoding': 'gzip' } })).headers.get('content-length'));
    console.log(`merchant first-load scripts: ${scripts.length} files, ${gz} bytes gzip`);
    expect(scripts.some((s) => /leaflet|\/map-/.test(s))).toBe(false);
    expect(gz).toBeLessThanOrEqual(40 * 1024);

    // The counter on a phone.
    const context: BrowserContext = await rig.browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
      locale: 'es-BO',
    });
    const page = await context.newPage();
    rig.watch(page);
    const scriptsLoaded: string[] = [];
    page.on('request', (r) => r.resourceType() === 'script' && scriptsLoaded.push(r.url()));
    await page.goto(`${base}/merchant`);
    await logIn(page, 'merchant@demo.test');
    await page.locator('#live[data-live="true"]').waitFor();
    /** Nothing wider than the phone, and every control a thumb can hit (44 px; checkboxes count by their label). */
    const fits = async (view: string) => {
      const found = await phoneFit(page, 390);
      expect(found.wide, `${view}: overflow`).toEqual([]);
      expect(found.small, `${view}: small touch targets`).toEqual([]);
    };

    // An order with a delivery window and a load: the card shows them (Spanish by default).
    const inH = (n: number) => new Date(Date.now() + n * 3600_000).toISOString();
    const windowed = await api(base, customer, 'POST', '/customer/orders', {
      branch_id: branch.id,
      address_id: address.id,
      items: [{ catalog_item_id: items[0].id, quantity: 1 }],
      payment_destination: 'cash',
      deliver_after: inH(2),
      deliver_before: inH(3),
      units: 4,
      weight_kg: 12.5,
    });
    expect(windowed.status, JSON.stringify(windowed.body)).toBe(201);
    const windowedCard = page.locator(`.order[data-order-id="${windowed.body.id}"]`);
    await windowedCard.waitFor();
    await expect.poll(() => windowedCard.locator('dl.facts').innerText()).toContain('Ventana de entrega');
    expect(await windowedCard.locator('dd.window-load').allInnerTexts()).toContainEqual('4 u · 12.5 kg');
    await windowedCard.screenshot({ path: 'test-artifacts/merchant-order-window-load.png' });
    await fits('order with a window and a load');

    // A new order: accepted with 45 minutes of preparation; the card says so, with the promise it moved.
    const o = await order('Para llevar');
    const card = page.locator(`.order[data-order-id="${o.id}"]`);
    await card.waitFor();
    await card.locator('select.prep').selectOption('45');
    await card.locator('input.reason').fill('borrador');
    // Another order arrives before the merchant presses accept: the list is redrawn, the choice and the text stay.
    const other = await order('Otro pedido');
    await page.locator(`.order[data-order-id="${other.id}"]`).waitFor();
    expect(await card.locator('select.prep').inputValue()).toBe('45');
    expect(await card.locator('input.reason').inputValue()).toBe('borrador');
    await card.locator('input.reason').fill('');
    await rig.shot(page, '10-phone-orders', { fullPage: true });
    await fits('orders');
    await card.locator('button.accept').click();
    await page.locator(`.order[data-order-id="${o.id}"][data-status="preparing"]`).waitFor();
    const accepted = (await api(base, merchant, 'GET', '/merchant/orders?status=preparing')).body.data.find(
      (x: { id: string }) => x.id === o.id,
    );
    expect(accepted.preparation_min).toBe(45);
    expect(new Date(accepted.promised_at).getTime()).toBeGreaterThan(new Date(o.promised_at).getTime());
    await expect.poll(() => card.locator('.prep-given').textContent()).toContain('45 min');
    const clock = new Date(accepted.promised_at).toLocaleTimeString('es-BO', { hour: '2-digit', minute: '2-digit' });
    expect(await card.locator('.promised-at').textContent()).toBe(`prometido ${clock}`);
    expect(await card.locator('.promise-line').getAttribute('data-risk')).toBe('');

    // Ready, delivered by the platform's driver who collects the cash: the money view lists it as held by drivers.
    await card.locator('button.ready').click();
    await page.locator(`.order[data-order-id="${o.id}"] .trip`).waitFor();
    const tripId = (await card.locator('.trip').getAttribute('data-trip-id'))!;
    expect((await api(base, admin, 'POST', `/trips/${tripId}/assign`, { driver_id: driver.id })).status).toBe(200);
    expect((await api(base, driverToken, 'POST', `/driver/trips/${tripId}/accept`)).status).toBe(200);
    const pin = (await api(base, merchant, 'GET', `/trips/${tripId}`)).body.pickup_pin;
    expect((await api(base, driverToken, 'POST', `/trips/${tripId}/verify-pickup`, { pin })).status).toBe(200);
    expect((await api(base, driverToken, 'POST', `/driver/trips/${tripId}/start-delivery`)).status).toBe(200);
    const trip = (await api(base, customer, 'GET', `/trips/${tripId}`)).body;
    const due = (await api(base, merchant, 'GET', `/trips/${tripId}`)).body.cash_to_collect as string;
    expect(
      (await api(base, driverToken, 'POST', `/trips/${tripId}/verify-delivery`, { pin: trip.delivery_pin, cash_collected: due })).status,
    ).toBe(200);
    await page.goto(`${base}/merchant#/money`);
    await page.locator(`#cash-held tr[data-order-id="${o.id}"]`).waitFor();
    const held = (await api(base, merchant, 'GET', '/merchant/cash')).body;
    expect(held.data.map((x: { order_id: string }) => x.order_id)).toContain(o.id);
    expect(await page.locator('#cash-held .totals').textContent()).toContain(`pedidos: ${held.count}`);
    // The entries say what they are in Spanish, not the server's English note.
    const commission = page.locator(`#entries tr[data-order-id="${o.id}"][data-entry-type="platform_commission"] .detail`);
    expect(await commission.textContent()).toBe(`Comisión de la plataforma por el pedido #${o.id.slice(-6).toUpperCase()}`);
    await rig.shot(page, '12-phone-money', { fullPage: true });
    await fits('money');

    // The spreadsheet of the period comes from the server: a workbook with this order's entries, in Spanish.
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#spreadsheet').click()]);
    expect(download.suggestedFilename()).toMatch(/^wallet_\d{4}-\d{2}-\d{2}_\d{4}-\d{2}-\d{2}\.xlsx$/);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile((await download.path())!);
    const ws = wb.getWorksheet('Movimientos')!;
    const orderCol = (ws.getRow(5).values as unknown[]).indexOf('Pedido');
    const inFile: unknown[] = [];
    ws.eachRow((r) => inFile.push(r.getCell(orderCol).value));
    expect(inFile).toContain(o.id);

    // English: the same entry in English; the other views fit the phone too.
    await page.locator('#lang').selectOption('en');
    await page.goto(`${base}/merchant#/money`);
    await expect.poll(() => commission.textContent()).toBe(`Platform commission on order #${o.id.slice(-6).toUpperCase()}`);
    await rig.shot(page, '13-phone-money-en', { fullPage: true });
    await fits('money (en)');
    await page.goto(`${base}/merchant#/branches`);
    await page.locator('.branch input.b-prep').first().waitFor();
    await rig.shot(page, '14-phone-branches-en', { fullPage: true });
    await fits('branches (en)');
    await page.goto(`${base}/merchant#/catalog`);
    await page.locator('#catalog .item').first().waitFor();
    await fits('catalog (en)');
    await page.goto(`${base}/merchant#/orders`);
    await page.locator('#orders').waitFor();
    await rig.shot(page, '15-phone-orders-en', { fullPage: true });
    await fits('orders (en)');

    // The branch's usual preparation time: out of range is refused in the page's language, nothing changes; a good one saves.
    await page.goto(`${base}/merchant#/branches`);
    const b = page.locator(`.branch[data-branch-id="${branch.id}"]`);
    await b.locator('input.b-prep').fill('0');
    await b.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => b.locator('.form-error').textContent()).toContain('1 to 240');
    expect((await api(base, merchant, 'GET', '/merchant/branches')).body.data[0].preparation_min).toBe(branch.preparation_min);
    await b.locator('input.b-prep').fill('25');
    await b.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await api(base, merchant, 'GET', '/merchant/branches')).body.data[0].preparation_min).toBe(25);

    // No map code so far; the express view fetches it and shows the map.
    expect(scriptsLoaded.some((u) => /leaflet|\/map-/.test(u))).toBe(false);
    await page.goto(`${base}/merchant#/express`);
    await page.locator('#express-map.leaflet-container').waitFor();
    expect(scriptsLoaded.some((u) => /leaflet|\/map-/.test(u))).toBe(true);
    await rig.shot(page, '16-phone-express-en', { fullPage: true });
    await fits('express (en)');

    // Past its promise an open order is marked late (the page's clock moved on; a redraw or the 30-second refresh shows it).
    const late = await order('Tarde');
    await page.goto(`${base}/merchant#/orders`);
    await page.locator(`.order[data-order-id="${late.id}"] .promise-line[data-risk=""]`).waitFor();
    // Five minutes before its promise and not on its way yet: at risk.
    await page.clock.setFixedTime(new Date(new Date(late.promised_at).getTime() - 5 * 60_000));
    await page.getByRole('button', { name: 'History' }).click();
    await page.getByRole('button', { name: 'In progress' }).click();
    await page.locator(`.order[data-order-id="${late.id}"] .promise-line[data-risk="at_risk"] .risk.at_risk`).waitFor();
    expect(await page.locator(`.order[data-order-id="${late.id}"] .risk`).textContent()).toBe('At risk of being late');
    await page.clock.setFixedTime(new Date(new Date(late.promised_at).getTime() + 5 * 60_000));
    await page.getByRole('button', { name: 'History' }).click();
    await page.getByRole('button', { name: 'In progress' }).click();
    await page.locator(`.order[data-order-id="${late.id}"] .promise-line[data-risk="late"] .risk.late`).waitFor();
    expect(await page.locator(`.order[data-order-id="${late.id}"] .risk`).textContent()).toBe('Late');
    await rig.shot(page, '17-phone-late-en', { fullPage: true });
    await context.close();
    expect(rig.problems).toEqual([]);
  }, 600_000);
});
