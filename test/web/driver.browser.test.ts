import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext } from 'playwright-core';
import { api, login } from '../hardening/server-process.js';
import { pt, waitFor } from '../support.js';
import { ARTIFACTS, logIn, skipBrowser, startRig, type BrowserRig } from './browser.js';

/**
 * The driver app (/driver/) in a real browser on a phone profile (360 × 640, touch, Spanish), against the real
 * server on the embedded database with the demo seed: installable (manifest, service worker controlling the page),
 * drivers only, a delivery whose network is cut in the middle (the proof done offline reaches the server once), the
 * app reopened offline. Screenshots in test-artifacts/driver-*.png; the measured figures in
 * test-artifacts/driver-figures.json (docs/driver-app.md quotes them). Skipped, with a message, without chromium.
 */

const SKIP = skipBrowser('test/web/driver.browser.test.ts');

/** A drive from the pickup towards the drop-off, in La Paz (the demo territory). */
const ROUTE = Array.from({ length: 8 }, (_, i) => ({ latitude: -16.499 - i * 0.0015, longitude: -68.1335 + i * 0.0017 }));

describe.skipIf(SKIP)('driver app in chromium (phone)', () => {
  let rig: BrowserRig;
  let admin: string;
  let driverId: string;
  const figures: Record<string, unknown> = {};

  beforeAll(async () => {
    rig = await startRig('driver-browser', { shots: 'driver-' });
    admin = await login(rig.base, 'admin@demo.test');
    const drivers = await api(rig.base, admin, 'GET', '/drivers?status=approved');
    driverId = drivers.body.data.find((d: { display_name: string }) => d.display_name === 'Demo driver').id;
    expect((await api(rig.base, admin, 'PATCH', `/drivers/${driverId}`, { capacity: 5 })).status).toBe(200);
  }, 300_000);

  afterAll(async () => {
    writeFileSync(path.join(ARTIFACTS, 'driver-figures.json'), `${JSON.stringify(figures, null, 2)}\n`);
    await rig?.close();
  });

  const phone = (extra: Parameters<Browser['newContext']>[0] = {}) =>
    rig.browser.newContext({
      viewport: { width: 360, height: 640 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
      locale: 'es-BO',
      geolocation: ROUTE[0],
      permissions: ['geolocation'],
      ...extra,
    });

  const trip = async (id: string) => (await api(rig.base, admin, 'GET', `/trips/${id}`)).body;
  const driverNow = async () =>
    (
      (await api(rig.base, admin, 'GET', '/drivers?status=approved&limit=100')).body.data as {
        id: string;
        available: boolean;
        last_location: { coordinates: number[] } | null;
      }[]
    ).find((d) => d.id === driverId)!;
  async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, timeout = 60_000): Promise<T> {
    let last: T | undefined;
    await waitFor(async () => ok((last = await read())), { timeout, interval: 200, message: what });
    return last as T;
  }

  it('installable: manifest, icons, a service worker controlling /driver/; drivers only; the session survives a reload', async () => {
    const base = rig.base;
    const context = await phone();
    const page = await context.newPage();
    rig.watch(page);
    const res = await page.goto(`${base}/driver`);
    expect(res!.status()).toBe(200);
    expect(page.url()).toBe(`${base}/driver/`);
    expect(res!.headers()['content-security-policy']).toContain("script-src 'self'");

    const manifestHref = await page.locator('link[rel="manifest"]').getAttribute('href');
    const m = await (await fetch(new URL(manifestHref!, base))).json();
    expect(m).toMatchObject({ start_url: '/driver/', scope: '/driver/', display: 'standalone', lang: 'es' });
    expect(m.name).toBeTruthy();
    for (const size of ['192x192', '512x512']) {
      const icon = m.icons.find((i: { sizes: string }) => i.sizes === size);
      const r = await fetch(new URL(icon.src, base));
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('image/png');
    }
    const sw = await fetch(`${base}/driver/sw.js`);
    expect(sw.headers.get('content-type')).toContain('javascript');
    expect(sw.headers.get('service-worker-allowed')).toBe('/driver/');
    expect(sw.headers.get('cache-control')).toBe('no-cache');
    // The worker takes control of the page (install criteria: a fetch handler controlling the start URL).
    await page.waitForFunction(
      () => navigator.serviceWorker?.controller !== null && navigator.serviceWorker?.controller !== undefined,
      null,
      { timeout: 30_000 },
    );
    expect(await page.evaluate(() => navigator.serviceWorker.controller!.scriptURL)).toBe(`${base}/driver/sw.js`);

    // Another role is told where to go, in a sentence.
    await logIn(page, 'dispatch@demo.test');
    await page.locator('[data-wrong-role]').waitFor();
    expect(await page.locator('[data-wrong-role]').textContent()).toContain('/console');
    await rig.shot(page, '01-wrong-role');
    await page.getByRole('button', { name: 'Volver' }).click();
    await logIn(page, 'driver@demo.test');
    await page.locator('.d-top .d-name', { hasText: 'Demo driver' }).waitFor();
    await page.reload();
    await page.locator('.d-top .d-name', { hasText: 'Demo driver' }).waitFor();
    // Touch targets: every button of the page at least 44 px high, nothing wider than the phone.
    const small = await page.$$eval('button, a.d-btn, select, input:not([type=file])', (els) =>
      els
        .filter((e) => (e as HTMLElement).offsetParent !== null && e.getBoundingClientRect().height < 44)
        .map((e) => e.outerHTML.slice(0, 80)),
    );
    expect(small).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await context.close();
  }, 120_000);

  it('a delivery with the network cut in the middle: accept, pickup PIN, drive, offline delivery with PIN, photo and signature, reopened offline, back online — delivered with its proof once', async () => {
    const base = rig.base;
    const created = await api(base, admin, 'POST', '/trips', {
      pickup_location: pt(-68.1335, -16.499),
      pickup_address: 'Av. 16 de Julio 1490',
      dropoff_location: pt(-68.12, -16.51),
      dropoff_address: 'Calle Sagárnaga 213',
      notes: 'Timbre 2B',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    const pins = await trip(id);

    const context = await phone();
    let page = await context.newPage();
    rig.watch(page);
    await page.goto(`${base}/driver/`);
    await logIn(page, 'driver@demo.test');
    await page.locator('.d-top .d-name', { hasText: 'Demo driver' }).waitFor();
    await page.waitForFunction(() => !!navigator.serviceWorker?.controller, null, { timeout: 30_000 });
    // On duty (the profile loaded first: the button is enabled once it is known).
    await page.locator('#duty:not([disabled])').waitFor();
    if ((await page.locator('#duty[aria-pressed="false"]').count()) > 0) await page.locator('#duty').click();
    await page.locator('#duty[aria-pressed="true"]').waitFor();
    expect((await driverNow()).available).toBe(true);

    // The offer arrives (the next poll), with its countdown; accept it.
    const assigned = await api(base, admin, 'POST', `/trips/${id}/assign`, { driver_id: driverId });
    expect(assigned.status, JSON.stringify(assigned.body)).toBe(200);
    const offer = page.locator(`[data-offer="${id}"]`);
    await offer.waitFor({ timeout: 30_000 });
    await expect.poll(() => offer.locator('[data-countdown]').textContent()).toMatch(/\d+:\d\d/);
    await rig.shot(page, '02-offer');
    await offer.locator('[data-action="accept"]').click();
    await until(
      'accepted',
      () => trip(id),
      (t) => t.status === 'accepted',
    );

    // The route: the pickup is the next stop, with the navigation links; the pickup PIN.
    await page.locator('[data-tab="route"]').click();
    await page.locator(`.d-next[data-next-trip="${id}"]`).waitFor();
    expect(await page.locator('.d-next a[href^="geo:"]').count()).toBe(1);
    expect(await page.locator('.d-next a[href*="google.com/maps"]').count()).toBe(1);
    await page.locator('#map[data-stops]').waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await rig.shot(page, '03-route-pickup');
    await page.locator('#pickup-pin').fill(pins.pickup_pin);
    await page.getByRole('button', { name: 'Confirmar recogida y salir' }).click();
    await until(
      'in transit',
      () => trip(id),
      (t) => t.status === 'in_transit',
    );

    // Drive: the phone moves; its points reach the server in batches.
    // One position at a time: each heard by the app (its fix count moves) before the next.
    const fixes = () => page.evaluate(() => Number(document.body.dataset.gpsFixes ?? 0));
    for (const at of ROUTE.slice(1, 5)) {
      const before = await fixes();
      await context.setGeolocation(at);
      await page.waitForFunction((n) => Number(document.body.dataset.gpsFixes ?? 0) > n, before);
    }
    await until('the driver moved', driverNow, (d) => (d.last_location?.coordinates[0] ?? -99) > -68.1335, 60_000);

    // The network goes; the delivery is done offline: PIN, a camera photo (a large one: resized), a signature.
    await context.setOffline(true);
    await page.locator('#net[data-online="false"]').waitFor();
    for (const at of ROUTE.slice(5)) await context.setGeolocation(at);
    await page.locator(`.d-next[data-next-trip="${id}"][data-status="in_transit"]`).waitFor();
    await page.locator('#delivery-pin').fill(pins.delivery_pin);
    const photo = await bigPhoto();
    await page.locator('#delivery-photo').setInputFiles({ name: 'camera.jpg', mimeType: 'image/jpeg', buffer: photo });
    await page.locator('.d-photo[data-ready="true"]').first().waitFor();
    await page.locator('.d-sign').scrollIntoViewIfNeeded();
    const pad = await page.locator('.d-sign').boundingBox();
    await page.mouse.move(pad!.x + 20, pad!.y + 40);
    await page.mouse.down();
    for (let i = 1; i <= 10; i++) await page.mouse.move(pad!.x + 20 + i * 25, pad!.y + 40 + (i % 2) * 50);
    await page.mouse.up();
    await page.locator('.d-sign[data-drawn="true"]').waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await rig.shot(page, '04-delivery-form');
    await page.locator('#confirm-delivery').click();
    await page.locator('#status[data-queue="2"]').waitFor();
    expect((await trip(id)).status).toBe('in_transit');
    await page.locator('[data-tab="today"]').click();
    await page.locator('#queue li[data-op="trip.verify_delivery"]').waitFor();
    await rig.shot(page, '05-offline-queued');

    // The app is closed in the tunnel and opened again: the shell from the service worker, the queued work from IndexedDB.
    await page.close();
    page = await context.newPage();
    rig.watch(page);
    const reopened = await page.goto(`${base}/driver/`);
    expect(reopened!.ok()).toBe(true);
    await page.locator('.d-top .d-name', { hasText: 'Demo driver' }).waitFor();
    await page.locator('#net[data-online="false"]').waitFor();
    await page.locator('#queue li[data-op="trip.verify_delivery"]').waitFor();
    await page.locator('[data-banner="offline"]').waitFor();
    await rig.shot(page, '06-reopened-offline');
    expect((await trip(id)).status).toBe('in_transit');

    // Back online: the queue drains; the server has the delivery, its photo proof and the points, once.
    await context.setOffline(false);
    await page.locator('#status[data-queue="0"][data-points="0"]').waitFor({ timeout: 60_000 });
    const done = await until(
      'completed',
      () => trip(id),
      (t) => t.status === 'completed',
    );
    expect(done.status).toBe('completed');
    const proofs = (await api(base, admin, 'GET', `/trips/${id}/proofs`)).body.data as {
      stage: string;
      evidence: { type: string; storage_key: string } | null;
    }[];
    expect(proofs.map((p) => p.stage).sort()).toEqual(['delivery', 'pickup']);
    const delivery = proofs.find((p) => p.stage === 'delivery')!;
    expect(delivery.evidence?.type).toBe('photo');
    const stored = await fetch(`${base}/api/v1/storage/objects/${delivery.evidence!.storage_key}`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(stored.status).toBe(200);
    expect(stored.headers.get('content-type')).toBe('image/jpeg');
    const bytes = Buffer.from(await stored.arrayBuffer());
    // Resized in the browser: smaller than the camera's file, at most 1600 px wide.
    expect(bytes.length).toBeLessThan(photo.length);
    expect(jpegWidth(bytes)).toBeLessThanOrEqual(1600);
    await page.locator('[data-note="ok"]').first().waitFor();
    await rig.shot(page, '07-back-online');

    // Reloading and pushing again applies nothing twice.
    await page.reload();
    await page.locator('#status[data-queue="0"]').waitFor();
    expect(((await api(base, admin, 'GET', `/trips/${id}/proofs`)).body.data as unknown[]).length).toBe(2);
    await context.close();
    expect(rig.problems).toEqual([]);
  }, 240_000);

  it('a trip cancelled while the driver is offline: the queued step is refused in words; a wrong PIN says how many tries remain; a lost session keeps the queue', async () => {
    const base = rig.base;
    const mk = async (dropoff: string) => {
      const r = await api(base, admin, 'POST', '/trips', {
        pickup_location: pt(-68.1335, -16.499),
        pickup_address: 'Av. 16 de Julio 1490',
        dropoff_location: pt(-68.125, -16.505),
        dropoff_address: dropoff,
      });
      expect(r.status).toBe(201);
      expect((await api(base, admin, 'POST', `/trips/${r.body.id}/assign`, { driver_id: driverId })).status).toBe(200);
      return r.body.id as string;
    };
    const a = await mk('Calle Cancelada 1');
    const driver = await login(base, 'driver@demo.test');
    expect((await api(base, driver, 'POST', `/driver/trips/${a}/accept`)).status).toBe(200);

    const context = await phone();
    const page = await context.newPage();
    rig.watch(page);
    await page.goto(`${base}/driver/`);
    await logIn(page, 'driver@demo.test');
    await page.locator('[data-tab="route"]').click();
    await page.locator(`.d-next[data-next-trip="${a}"]`).waitFor({ timeout: 30_000 });
    // A wrong pickup PIN, online: the tries left, in Spanish. While it is being typed a new offer comes in and the
    // page redraws (the poll that runs when the phone shows the page again): what was typed stays, with the focus.
    const pins = await trip(a);
    const wrong = pins.pickup_pin === '0000' ? '1111' : '0000';
    await page.locator('#pickup-pin').fill(wrong);
    await page.locator('#main').evaluate((el) => (el.dataset.before = 'redraw'));
    await mk('Calle Nueva Oferta 9');
    await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
    await page.locator('#main:not([data-before])').waitFor({ timeout: 30_000 });
    expect(await page.locator('#pickup-pin').inputValue()).toBe(wrong);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('pickup-pin');
    await page.getByRole('button', { name: 'Confirmar recogida y salir' }).click();
    await page.locator('[data-note="error"]', { hasText: 'quedan 4 intentos' }).waitFor();
    await rig.shot(page, '08-wrong-pin');

    await context.setOffline(true);
    await page.locator('#net[data-online="false"]').waitFor();
    await page.locator(`.d-next[data-next-trip="${a}"]`).waitFor();
    await page.locator('#pickup-pin').fill(pins.pickup_pin);
    await page.getByRole('button', { name: 'Confirmar recogida y salir' }).click();
    await page.locator('#status[data-queue="2"]').waitFor();
    expect((await api(base, admin, 'POST', `/trips/${a}/status`, { status: 'cancelled', reason: 'customer called' })).status).toBe(200);
    await context.setOffline(false);
    await page.locator('[data-note="warn"]', { hasText: 'el viaje cambió mientras tanto' }).waitFor({ timeout: 60_000 });
    await page.locator('#status[data-queue="0"]').waitFor();
    expect((await trip(a)).status).toBe('cancelled');
    await rig.shot(page, '09-conflict');

    // A session lost while offline (its tokens no longer valid when the network returns): the page asks to log in
    // again and the queued acceptance waits; after the login it is sent.
    const c = await mk('Calle Sesión 3');
    await page.locator('[data-tab="today"]').click();
    await page.locator(`[data-offer="${c}"]`).waitFor({ timeout: 30_000 });
    await context.setOffline(true);
    await page.locator('#net[data-online="false"]').waitFor();
    await page.locator(`[data-offer="${c}"] [data-action="accept"]`).click();
    await page.locator('#status[data-queue="1"]').waitFor();
    await page.evaluate(() => {
      const s = JSON.parse(localStorage.getItem('driver.session')!);
      localStorage.setItem('driver.session', JSON.stringify({ ...s, access: 'expired', refresh: 'revoked' }));
    });
    await page.reload();
    await page.locator('#status[data-queue="1"]').waitFor();
    await context.setOffline(false);
    await page.getByRole('button', { name: 'Iniciar sesión' }).waitFor({ timeout: 30_000 });
    await page.locator('.d-login .d-banner', { hasText: 'Tu sesión terminó' }).waitFor();
    expect((await trip(c)).status).toBe('assigned');
    await rig.shot(page, '10-session-lost');
    await logIn(page, 'driver@demo.test');
    await until(
      'accepted after the new login',
      () => trip(c),
      (t) => t.status === 'accepted',
    );
    await page.locator('#status[data-queue="0"]').waitFor();
    await context.close();
    expect(rig.problems).toEqual([]);
  }, 180_000);

  it('cash in hand and the cash to collect; offers pushed by the event stream (the poll set to 10 minutes); call or WhatsApp the recipient once accepted; counts in the singular', async () => {
    const base = rig.base;
    const merchant = await login(base, 'merchant@demo.test');
    const customer = await login(base, 'customer@demo.test');
    // Cash the driver carries: an administrator's correction (the same ledger as the cash collected at the door).
    const adj = await api(base, admin, 'POST', `/drivers/${driverId}/cash-adjustments`, {
      amount: '240.00',
      reason: 'cambio para el turno',
    });
    expect(adj.status, JSON.stringify(adj.body)).toBe(201);
    const inHand = adj.body.cash.cash_in_hand as string;
    // The trips earlier tests left with the driver are cancelled: the new one is the next stop.
    for (const x of (await api(base, admin, 'GET', `/trips?driver_id=${driverId}&limit=100`)).body.data as {
      id: string;
      status: string;
    }[]) {
      if (['assigned', 'accepted', 'picked_up', 'in_transit'].includes(x.status))
        expect((await api(base, admin, 'POST', `/trips/${x.id}/status`, { status: 'cancelled', reason: 'test reset' })).status).toBe(200);
    }

    const context = await phone();
    // Only the stream can bring an offer within the test's deadlines: the poll waits 10 minutes.
    await context.addInitScript(() => localStorage.setItem('driver.pollMs', '600000'));
    const page = await context.newPage();
    rig.watch(page);
    await page.goto(`${base}/driver/`);
    await logIn(page, 'driver@demo.test');
    await page.locator('body[data-live="true"]').waitFor({ timeout: 30_000 });
    const cash = page.locator(`.d-cash-card[data-cash-in-hand="${inHand}"]`);
    await cash.waitFor();
    expect(await cash.locator('h2').textContent()).toBe(`Efectivo en mano: ${inHand} BOB`);
    expect(await cash.locator('li[data-cash-entry="cash_adjustment"]').first().textContent()).toContain('+240.00');
    await rig.shot(page, '11-cash-in-hand');

    // An express delivery with the recipient's phone: the offer arrives by the stream; no phone before it is accepted.
    const express = await api(base, merchant, 'POST', '/merchant/delivery-express', {
      pickup_location: pt(-68.1335, -16.499),
      pickup_address: 'Av. 16 de Julio 1490',
      customer_name: 'Ana Flores',
      customer_phone: '+59170011223',
      dropoff_address: 'Calle Jaén 711',
      dropoff_location: pt(-68.135, -16.495),
    });
    expect(express.status, JSON.stringify(express.body)).toBe(201);
    const a = express.body.trip_id as string;
    const pushedBefore = Number(await page.locator('body').getAttribute('data-pushed'));
    expect((await api(base, admin, 'POST', `/trips/${a}/assign`, { driver_id: driverId })).status).toBe(200);
    await page.locator(`[data-offer="${a}"]`).waitFor({ timeout: 30_000 });
    expect(Number(await page.locator('body').getAttribute('data-pushed'))).toBeGreaterThan(pushedBefore);
    expect(await page.locator('[data-recipient-phone]').count()).toBe(0);
    await page.locator(`[data-offer="${a}"] [data-action="accept"]`).click();
    await until(
      'accepted',
      () => trip(a),
      (x) => x.status === 'accepted',
    );
    await page.locator('[data-tab="route"]').click();
    const contact = page.locator(`.d-next[data-next-trip="${a}"] .d-contact[data-recipient-phone="+59170011223"]`);
    await contact.waitFor();
    expect(await contact.locator('a.d-call').getAttribute('href')).toBe('tel:+59170011223');
    expect(await contact.locator('a.d-whatsapp').getAttribute('href')).toBe('https://wa.me/59170011223');
    expect(await contact.textContent()).toContain('Ana Flores');
    for (const box of [await contact.locator('a.d-call').boundingBox(), await contact.locator('a.d-whatsapp').boundingBox()])
      expect(box!.height).toBeGreaterThanOrEqual(48);
    // The driver's own words, not the merchant page's ("give it to the driver").
    expect(await page.locator('label[for="pickup-pin"]').textContent()).toBe('PIN de recogida (te lo da el comercio)');
    await rig.shot(page, '12-route-contact');

    // A cash order: the offer (pushed) and then the active trip show the cash to collect.
    const branch = (await api(base, merchant, 'GET', '/merchant/branches')).body.data[0];
    const item = (await api(base, merchant, 'GET', '/merchant/catalog')).body.data[0];
    const address = (await api(base, customer, 'GET', '/customer/addresses')).body.data[0];
    const order = await api(base, customer, 'POST', '/customer/orders', {
      branch_id: branch.id,
      address_id: address.id,
      items: [{ catalog_item_id: item.id, quantity: 1 }],
      payment_destination: 'cash',
    });
    expect(order.status, JSON.stringify(order.body)).toBe(201);
    let moved = { status: 0, body: { trip_id: null as string | null } };
    for (const status of ['confirmed', 'preparing', 'ready']) {
      moved = await api(base, merchant, 'PATCH', `/merchant/orders/${order.body.id}/status`, { status });
      expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    }
    const b = moved.body.trip_id!;
    const due = (await trip(b)).cash_to_collect as string;
    expect(Number(due)).toBeGreaterThan(0);
    expect((await api(base, admin, 'POST', `/trips/${b}/assign`, { driver_id: driverId })).status).toBe(200);
    await page.locator('[data-tab="today"]').click();
    const offer = page.locator(`[data-offer="${b}"]`);
    await offer.waitFor({ timeout: 30_000 });
    expect(await offer.locator('dd.d-cash').textContent()).toBe(`${due} BOB`);
    await offer.scrollIntoViewIfNeeded();
    await rig.shot(page, '13-offer-cash');
    await page.getByRole('combobox', { name: 'Idioma' }).selectOption('en');
    await offer.locator('dt', { hasText: 'Cash to collect' }).scrollIntoViewIfNeeded();
    await rig.shot(page, '13-offer-cash-en');
    await page.getByRole('combobox', { name: 'Language' }).selectOption('es');
    await offer.locator('[data-action="accept"]').click();
    await page.locator(`.d-trip[data-trip-id="${b}"] [data-cash-due="${due}"]`).waitFor();
    expect(await page.locator(`.d-trip[data-trip-id="${b}"] button`).textContent()).toBe('Abrir');
    await until(
      'the cash trip accepted',
      () => trip(b),
      (x) => x.status === 'accepted',
    );

    // One action waiting: "1 acción", not "1 acciones".
    await context.setOffline(true);
    await page.locator('#net[data-online="false"]').waitFor();
    await page.locator('[data-tab="route"]').click();
    await page.locator(`.d-next[data-next-trip]`).first().waitFor();
    const realPin = (await trip(a)).pickup_pin as string;
    await page.locator('#pickup-pin').fill(realPin === '0000' ? '1111' : '0000');
    await page.getByRole('button', { name: 'Confirmar recogida y salir' }).click();
    await page.locator('#status[data-queue="2"]').waitFor();
    expect(await page.locator('#status').textContent()).toMatch(/^Por enviar: 2 acciones, \d+ puntos? GPS$/);
    await page.evaluate(async () => {
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const r = indexedDB.open('pwa:driver', 1);
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => reject(r.error);
      });
      const all = await new Promise<{ seq: number }[]>((resolve) => {
        const r = db.transaction('ops').objectStore('ops').getAll();
        r.onsuccess = () => resolve(r.result);
      });
      const tx = db.transaction(['ops', 'points'], 'readwrite');
      tx.objectStore('ops').delete(all[all.length - 1]!.seq);
      tx.objectStore('points').clear();
      await new Promise((r) => (tx.oncomplete = r));
    });
    // Reopened (offline, from the service worker): the queue read again, the first fix kept as one point.
    await page.reload();
    await page.locator('body[data-gps-kept="1"]').waitFor({ timeout: 30_000 });
    await page.locator('[data-tab="today"]').click();
    // The cash in hand and the cash to collect from the page's own copy, with no network.
    await page.locator(`.d-cash-card[data-cash-in-hand="${inHand}"]`).waitFor();
    await page.locator(`.d-trip[data-trip-id="${b}"] [data-cash-due="${due}"]`).waitFor();
    await expect.poll(() => page.locator('#status').textContent()).toBe('Por enviar: 1 acción, 1 punto GPS');
    await page.getByRole('combobox', { name: 'Idioma' }).selectOption('en');
    await expect.poll(() => page.locator('#status').textContent()).toBe('To send: 1 action, 1 GPS point');
    await context.setOffline(false);
    await page.locator('#status[data-queue="0"]').waitFor({ timeout: 60_000 });
    await page.locator('[data-note="error"]', { hasText: 'Wrong PIN' }).waitFor();
    expect(await cash.locator('h2').textContent()).toBe(`Cash in hand: ${inHand} BOB`);
    await rig.shot(page, '14-today-en');
    await page.locator('[data-tab="route"]').click();
    await page
      .locator(`.d-next .d-contact`)
      .first()
      .evaluate((el) => el.scrollIntoView({ block: 'center' }));
    await rig.shot(page, '15-route-contact-en');
    await page.locator('[data-tab="earnings"]').click();
    await page.locator('.d-cash-card').waitFor();
    await rig.shot(page, '16-earnings-en');
    await page.getByRole('combobox', { name: 'Language' }).selectOption('es');
    await page.locator('.d-cash-card h2', { hasText: 'Efectivo en mano' }).waitFor();
    // The messages follow the language too.
    await page.locator('[data-note="error"]', { hasText: 'PIN incorrecto' }).waitFor();
    await rig.shot(page, '17-earnings-es');
    await context.close();
    expect(rig.problems).toEqual([]);
  }, 240_000);

  it("service worker: caches of other builds of the page are deleted on activation (not other pages' caches); the manifest and icons come from the network first", async () => {
    const base = rig.base;
    const context = await phone();
    const page = await context.newPage();
    rig.watch(page);
    // Before the worker: caches left by an older build of the driver app, and the merchant page's own.
    await page.goto(`${base}/console/`);
    await page.evaluate(async () => {
      for (const name of ['pwa:/driver/', 'pwa:/driver/:0123456789abcdef', 'pwa:/merchant/:fedcba9876543210'])
        await (await caches.open(name)).put('/driver/old', new Response('old'));
    });
    await page.goto(`${base}/driver/`);
    await page.waitForFunction(() => !!navigator.serviceWorker?.controller, null, { timeout: 30_000 });
    const version = (await (await fetch(`${base}/driver/sw.js`)).text()).match(/const VERSION = '([0-9a-f]{16})'/)![1];
    await expect
      .poll(() => page.evaluate(() => caches.keys()))
      .toEqual(expect.arrayContaining([`pwa:/driver/:${version}`, 'pwa:/merchant/:fedcba9876543210']));
    expect((await page.evaluate(() => caches.keys())).filter((k) => k.startsWith('pwa:/driver/'))).toEqual([`pwa:/driver/:${version}`]);

    // A stale manifest and icon in the cache: the page still gets the served ones, and the cache is refreshed.
    await page.evaluate(async (name) => {
      const c = await caches.open(name);
      await c.put(
        '/driver/manifest.webmanifest',
        new Response('{"name":"old"}', { headers: { 'content-type': 'application/manifest+json' } }),
      );
      await c.put('/driver/icons/driver-192.png', new Response('old', { headers: { 'content-type': 'image/png' } }));
    }, `pwa:/driver/:${version}`);
    const read = () =>
      page.evaluate(async () => ({
        manifest: ((await (await fetch('/driver/manifest.webmanifest')).json()) as { name: string }).name,
        icon: (await (await fetch('/driver/icons/driver-192.png')).arrayBuffer()).byteLength,
      }));
    const online = await read();
    expect(online.manifest).toBe('Repartidor — entregas');
    expect(online.icon).toBeGreaterThan(100);
    // Offline: the cache, now holding the fresh copies.
    await context.setOffline(true);
    expect(await read()).toEqual(online);
    await context.close();
    expect(rig.problems).toEqual([]);
  }, 120_000);

  it('GPS and the offer ring: location denied is said; fixes while standing still keep one point; a low battery is noticed; an offer vibrates once; the screen stays on during a trip only', async () => {
    const base = rig.base;
    for (const x of (await api(base, admin, 'GET', `/trips?driver_id=${driverId}&limit=100`)).body.data as {
      id: string;
      status: string;
    }[]) {
      if (['assigned', 'accepted', 'picked_up', 'in_transit'].includes(x.status))
        expect((await api(base, admin, 'POST', `/trips/${x.id}/status`, { status: 'cancelled', reason: 'test reset' })).status).toBe(200);
    }
    // No location permission: the banner asks for it.
    const denied = await phone({ permissions: [] });
    let page = await denied.newPage();
    rig.watch(page);
    await page.goto(`${base}/driver/`);
    await logIn(page, 'driver@demo.test');
    await page.locator('#duty:not([disabled])').waitFor();
    if ((await page.locator('#duty[aria-pressed="false"]').count()) > 0) await page.locator('#duty').click();
    await page.locator('[data-banner="gps-denied"]').waitFor({ timeout: 30_000 });
    await rig.shot(page, '18-gps-denied');
    await denied.close();

    // A phone on a low battery, whose vibrations are recorded, that lets the page keep the screen on.
    const context = await phone({ permissions: ['geolocation', 'screen-wake-lock'] });
    await context.addInitScript(() => {
      const w = window as unknown as { vibrations: unknown[] };
      w.vibrations = [];
      Object.defineProperty(navigator, 'vibrate', { value: (p: unknown) => (w.vibrations.push(p), true), configurable: true });
      Object.defineProperty(navigator, 'getBattery', { value: async () => ({ level: 0.1, charging: false }), configurable: true });
    });
    page = await context.newPage();
    rig.watch(page);
    await page.goto(`${base}/driver/`);
    await logIn(page, 'driver@demo.test');
    await page.locator('#duty[aria-pressed="true"]').waitFor();
    await page.locator('body[data-low-battery="true"]').waitFor();
    // Standing still (a few metres of GPS jitter): five fixes, one point kept.
    await page.locator('body[data-gps-kept="1"]').waitFor({ timeout: 30_000 });
    const fixes = Number(await page.locator('body').getAttribute('data-gps-fixes'));
    for (let i = 1; i <= 5; i++) {
      await context.setGeolocation({ latitude: ROUTE[0]!.latitude + i * 0.00001, longitude: ROUTE[0]!.longitude });
      await page.locator(`body[data-gps-fixes="${fixes + i}"]`).waitFor();
    }
    expect(await page.locator('body').getAttribute('data-gps-kept')).toBe('1');

    // An offer rings once (the vibration pattern), not again when the page redraws.
    const created = await api(base, admin, 'POST', '/trips', {
      pickup_location: pt(-68.1335, -16.499),
      pickup_address: 'Av. Arce 2132',
      dropoff_location: pt(-68.12, -16.51),
      dropoff_address: 'Calle Lisímaco 88',
    });
    const id = created.body.id as string;
    expect((await api(base, admin, 'POST', `/trips/${id}/assign`, { driver_id: driverId })).status).toBe(200);
    await page.locator(`[data-offer="${id}"]`).waitFor({ timeout: 30_000 });
    await page.locator('[data-tab="inbox"]').click();
    await page.locator('[data-tab="today"]').click();
    await page.locator(`[data-offer="${id}"]`).waitFor();
    expect(await page.evaluate(() => (window as unknown as { vibrations: unknown[] }).vibrations)).toEqual([[400, 150, 400, 150, 400]]);

    // Accepted: the screen is kept on; the trip cancelled: it is let go.
    await page.locator(`[data-offer="${id}"] [data-action="accept"]`).click();
    await until(
      'accepted',
      () => trip(id),
      (x) => x.status === 'accepted',
    );
    await page.locator('body[data-wake-lock="held"]').waitFor({ timeout: 30_000 });
    expect((await api(base, admin, 'POST', `/trips/${id}/status`, { status: 'cancelled', reason: 'test' })).status).toBe(200);
    await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
    await page.locator('body[data-wake-lock="released"]').waitFor({ timeout: 30_000 });
    await context.close();
    expect(rig.problems).toEqual([]);
  }, 180_000);

  it('figures: first-load script size, time to interactive on a slowed phone, queue drain after 10 minutes of offline GPS', async () => {
    const base = rig.base;
    const html = await (await fetch(`${base}/driver/`)).text();
    const scripts = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
    let br = 0;
    let gz = 0;
    for (const s of scripts) {
      br += Number((await fetch(`${base}${s}`, { headers: { 'accept-encoding': 'br' } })).headers.get('content-length'));
      gz += Number((await fetch(`${base}${s}`, { headers: { 'accept-encoding': 'gzip' } })).headers.get('content-length'));
    }
    figures.first_load_script_bytes = { brotli: br, gzip: gz, files: scripts.length };
    expect(gz).toBeLessThanOrEqual(150 * 1024);

    // Time to interactive: a cold start (no cache, no worker) with the CPU slowed 4× and a slow 4G-like network.
    const context = await phone({ serviceWorkers: 'block' });
    const page = await context.newPage();
    rig.watch(page);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 150,
      downloadThroughput: (1.6 * 1024 * 1024) / 8,
      uploadThroughput: (750 * 1024) / 8,
    });
    await page.goto(`${base}/driver/`);
    await page.locator('body[data-ready="true"]').waitFor();
    figures.time_to_interactive_ms = Math.round(await page.evaluate(() => (window as unknown as { driverReadyAt: number }).driverReadyAt));
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    await logIn(page, 'driver@demo.test');
    await page.locator('#status').waitFor();

    // Ten minutes offline on the move: one point every 5 s is 120 points waiting in IndexedDB (written as the app writes them).
    await context.setOffline(true);
    await page.locator('#net[data-online="false"]').waitFor();
    const t0 = Date.now() - 600_000;
    await page.evaluate(async (start) => {
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const r = indexedDB.open('pwa:driver', 1);
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => reject(r.error);
      });
      const tx = db.transaction('points', 'readwrite');
      for (let i = 0; i < 120; i++) {
        tx.objectStore('points').put({
          client_point_id: `drain-${i}`,
          location: { type: 'Point', coordinates: [-68.13 + i * 0.0001, -16.5 - i * 0.0001] },
          recorded_at: new Date(start + i * 5000).toISOString(),
          accuracy_m: 8,
        });
      }
      await new Promise((r) => (tx.oncomplete = r));
    }, t0);
    // The page counts them (a redraw reads the store) before the network comes back: the drain is timed from 120.
    await page.locator('[data-tab="today"]').click();
    await page.waitForFunction(() => Number(document.getElementById('status')?.dataset.points) >= 120);
    const drainStart = Date.now();
    await context.setOffline(false);
    await page.locator('#status[data-points="0"]').waitFor({ timeout: 60_000 });
    figures.queue_drain_ms_120_points = Date.now() - drainStart;
    await context.close();
    expect(rig.problems).toEqual([]);
  }, 180_000);

  /** A camera-sized JPEG (3000 × 2000, noisy so it does not compress to nothing), drawn by the browser. */
  async function bigPhoto(): Promise<Buffer> {
    const ctx: BrowserContext = await rig.browser.newContext();
    const p = await ctx.newPage();
    const b64 = await p.evaluate(() => {
      const c = document.createElement('canvas');
      c.width = 3000;
      c.height = 2000;
      const g = c.getContext('2d')!;
      const img = g.createImageData(3000, 2000);
      for (let i = 0; i < img.data.length; i += 4) {
        img.data[i] = (i * 7) % 255;
        img.data[i + 1] = Math.random() * 255;
        img.data[i + 2] = (i / 4000) % 255;
        img.data[i + 3] = 255;
      }
      g.putImageData(img, 0, 0);
      return c.toDataURL('image/jpeg', 0.92).split(',')[1]!;
    });
    await ctx.close();
    return Buffer.from(b64, 'base64');
  }
});

/** The width of a baseline or progressive JPEG (its SOF marker). */
function jpegWidth(b: Buffer): number {
  let i = 2;
  while (i < b.length) {
    const marker = b[i + 1]!;
    const len = b.readUInt16BE(i + 2);
    if (marker >= 0xc0 && marker <= 0xc2) return b.readUInt16BE(i + 7);
    i += 2 + len;
  }
  return -1;
}
