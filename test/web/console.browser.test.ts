import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, login } from '../hardening/server-process.js';
import { pt } from '../support.js';
import { ARTIFACTS, breakableStreams, logIn, skipBrowser, startRig, type BrowserRig } from './browser.js';

/**
 * The dispatcher console and the tracking page in a real browser: Playwright (playwright-core) driving
 * Debian's chromium against the real server (src/server.ts) on the embedded database with the demo seed.
 * Screenshots go to test-artifacts/ (gitignored). Skipped, with a message, only when chromium is absent
 * (`apt-get install chromium`; .ci/run installs it).
 */

const SKIP = skipBrowser('test/web/console.browser.test.ts');

describe.skipIf(SKIP)('console and tracking page in chromium', () => {
  let rig: BrowserRig;

  beforeAll(async () => {
    rig = await startRig('console-browser');
  }, 300_000);

  afterAll(async () => {
    await rig?.close();
  });

  it('logs in, sees the seeded driver, assigns a trip, follows a live location, commits an optimized plan, a recipient tracks the trip; approvals and settings', async () => {
    const base = rig.base;
    const admin = await login(base, 'admin@demo.test');
    const drivers = await api(base, admin, 'GET', '/drivers?status=approved');
    const driver = drivers.body.data[0];
    expect(driver.display_name).toBe('Demo driver');
    expect((await api(base, admin, 'PATCH', `/drivers/${driver.id}`, { capacity: 5 })).status).toBe(200);

    const context = await rig.browser.newContext({ viewport: { width: 1600, height: 900 }, locale: 'es-BO' });
    // The page's event streams (read with fetch), so the test can break one.
    await context.addInitScript(breakableStreams);
    const page = await context.newPage();
    rig.watch(page);
    const res = await page.goto(`${base}/console`);
    expect(res!.status()).toBe(200);
    expect(res!.headers()['content-security-policy']).toContain("script-src 'self'");
    await rig.shot(page, '01-login');
    await logIn(page, 'dispatch@demo.test');

    // The seeded driver on the map (one canvas marker) and in the drivers table.
    await page.locator('#map[data-drivers="1"]').waitFor();
    await page.locator('#live[data-live="true"]').waitFor();
    await page.locator('details.driver-list summary').click();
    await expect.poll(() => page.locator(`tr[data-driver-id="${driver.id}"]`).textContent()).toContain('Demo driver');

    // A trip created elsewhere arrives over the stream into the pending column.
    const created = await api(base, admin, 'POST', '/trips', {
      pickup_location: pt(-68.1335, -16.499),
      pickup_address: 'Av. 16 de Julio 1490',
      dropoff_location: pt(-68.12, -16.51),
      dropoff_address: 'Calle Browser A 12',
    });
    expect(created.status).toBe(201);
    const tripA = created.body.id as string;
    const cardA = (status: string) => page.locator(`.column[data-status="${status}"] .card[data-trip-id="${tripA}"]`);
    await cardA('pending').waitFor();
    await rig.shot(page, '02-board');

    // Manual assignment from the candidates: the card moves to the assigned column.
    await cardA('pending').getByRole('button').click();
    await page.locator('#candidates button.assign').first().waitFor();
    await rig.shot(page, '03-trip-detail');
    await page.locator(`#candidates tr[data-driver-id="${driver.id}"] button.assign`).click();
    await cardA('assigned').waitFor();
    expect(await cardA('pending').count()).toBe(0);

    // A live location update from the driver app moves the driver (trip.location_updated on the stream).
    const driverToken = await login(base, 'driver@demo.test');
    expect((await api(base, driverToken, 'POST', '/driver/location', { location: pt(-68.121, -16.507) })).status).toBeLessThan(300);
    await page.locator(`tr[data-driver-id="${driver.id}"][data-lat="-16.507"][data-lon="-68.121"]`).waitFor();

    // The stream breaks (simulated: the page's EventSource is closed with an error). While the console has no
    // stream (its token request held back), a trip is created; the reconnection resumes after the last event
    // seen (`last_event_id`) and the missed trip.created is replayed into the pending column.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    await page.route('**/api/v1/realtime/tokens', async (route) => {
      await gate;
      await route.continue();
    });
    const streams: string[] = [];
    page.on('request', (r) => r.url().includes('/realtime/organization/stream') && streams.push(r.url()));
    await page.evaluate(() => (window as unknown as { streams_: AbortController[] }).streams_.at(-1)!.abort());
    await page.locator('#live[data-live="false"]').waitFor();
    const missed = await api(base, admin, 'POST', '/trips', {
      pickup_location: pt(-68.1335, -16.499),
      pickup_address: 'Av. 16 de Julio 1490',
      dropoff_location: pt(-68.125, -16.515),
      dropoff_address: 'Calle Reconexión 7',
    });
    expect(missed.status).toBe(201);
    release();
    await page.locator('#live[data-live="true"]').waitFor();
    await page.locator(`.column[data-status="pending"] .card[data-trip-id="${missed.body.id}"]`).waitFor();
    expect(new URL(streams.at(-1)!).searchParams.get('last_event_id')).toMatch(/^[0-9]+$/);
    await page.unroute('**/api/v1/realtime/tokens');
    expect((await api(base, admin, 'POST', `/trips/${missed.body.id}/status`, { status: 'cancelled', reason: 'test' })).status).toBe(200);
    await page.locator(`.column[data-status="cancelled"] .card[data-trip-id="${missed.body.id}"]`).waitFor();

    // Optimized dispatch: select two pending trips, request a plan, see it, commit it.
    const more: string[] = [];
    for (const [i, at] of [pt(-68.115, -16.5), pt(-68.14, -16.52)].entries()) {
      const r = await api(base, admin, 'POST', '/trips', {
        pickup_location: pt(-68.1335, -16.499),
        pickup_address: 'Av. 16 de Julio 1490',
        dropoff_location: at,
        dropoff_address: `Calle Plan ${i + 1}`,
      });
      expect(r.status).toBe(201);
      more.push(r.body.id);
    }
    for (const id of more) {
      const box = page.locator(`.column[data-status="pending"] .card[data-trip-id="${id}"] input.pick`);
      await box.waitFor();
      await box.check();
    }
    await page.locator('#optimize:not([disabled])').click();
    await page.locator('#plan:not([hidden]) #commit-plan:not([disabled])').waitFor();
    await expect.poll(() => page.locator('#plan .routes li[data-driver-id]').count()).toBe(1);
    expect(await page.locator('#plan .stops li').count()).toBe(4); // two pickups, two drop-offs, each with its ETA
    expect(await page.locator('#plan .stops li').first().textContent()).toMatch(/ · Carga \d+ u$/); // the load on board after the stop (his active trip included)
    await rig.shot(page, '04-optimized-plan');
    await page.locator('#commit-plan').click();
    for (const id of more) await page.locator(`.column[data-status="assigned"] .card[data-trip-id="${id}"]`).waitFor();
    await page.locator('#plan[hidden]').waitFor({ state: 'attached' });
    await rig.shot(page, 'console');

    // English labels.
    await page.locator('#lang').selectOption('en');
    await page.getByRole('heading', { name: 'Board' }).waitFor();
    await page.locator('#lang').selectOption('es');

    // The recipient opens the link of the message (the API address itself, in a browser): the tracking page.
    const link = await api(base, admin, 'POST', `/trips/${tripA}/recipient-link`, {});
    expect(link.status).toBe(200);
    const tracking = (await api(base, null, 'GET', new URL(link.body.url, base).pathname.replace('/api/v1', ''))).body;
    const phone = await rig.browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, locale: 'es-BO' });
    const recipient = await phone.newPage();
    rig.watch(recipient);
    const tr = await recipient.goto(new URL(link.body.url, base).toString());
    expect(tr!.headers()['content-type']).toContain('text/html');
    await recipient.locator('#t-status[data-status="assigned"]').waitFor();
    await recipient.locator('#t-map[data-driver="-16.507,-68.121"]').waitFor();
    if (tracking.delivery_pin) expect(await recipient.locator('#t-pin').textContent()).toBe(tracking.delivery_pin);
    await rig.shot(recipient, '05-tracking');
    await phone.close();

    // Keyboard: a card's button opens the trip detail with Enter, Escape closes it.
    await page.locator(`.card[data-trip-id="${tripA}"] button.open`).focus();
    await page.keyboard.press('Enter');
    await page.locator('#detail[open] #detail-status').waitFor();
    await page.keyboard.press('Escape');
    await page.locator('#detail:not([open])').waitFor({ state: 'attached' });

    // Logout ends the session: back to the login form.
    await page.locator('#logout').click();
    await page.getByRole('button', { name: 'Iniciar sesión' }).waitFor();

    // An administrator: the approval queues load, and a setting is saved.
    await logIn(page, 'admin@demo.test');
    await page.getByRole('link', { name: 'Aprobaciones' }).click();
    for (const q of ['q-drivers', 'q-merchants', 'q-documents', 'q-reviews']) await page.locator(`#${q} .body > :is(ul, p)`).waitFor();
    expect(await page.locator('.approvals .error').count()).toBe(0);
    await rig.shot(page, '07-approvals');
    await page.getByRole('link', { name: 'Configuración' }).click();
    await page.locator('#s-org-support_email').fill('soporte@demo.test');
    await page.locator('#s-org button[type="submit"]').click();
    await page.locator('.toast', { hasText: 'Guardado' }).waitFor();
    expect((await api(base, admin, 'GET', '/settings')).body.support_email).toBe('soporte@demo.test');
    await rig.shot(page, '08-settings');
    await page.locator('#logout').click();
    await page.getByRole('button', { name: 'Iniciar sesión' }).waitFor();
    await context.close();
    expect(rig.problems).toEqual([]);
  }, 240_000);

  it('draws 500 drivers and 2,000 trips, pans and zooms, leaves the map mid-zoom without a page error; first load under 300 KB of compressed script', async () => {
    const base = rig.base;
    // The first load: every script the console page loads, brotli-compressed as served.
    const html = await (await fetch(`${base}/console`)).text();
    const scripts = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    let compressed = 0;
    for (const s of scripts) {
      const r = await fetch(`${base}${s}`, { headers: { 'accept-encoding': 'br' } });
      expect(r.headers.get('content-encoding')).toBe('br');
      expect(r.headers.get('cache-control')).toContain('immutable');
      // fetch decompresses the body: the bytes on the wire are the Content-Length.
      compressed += Number(r.headers.get('content-length'));
      await r.arrayBuffer();
    }
    expect(compressed).toBeLessThan(300 * 1024);

    const context = await rig.browser.newContext({ viewport: { width: 1600, height: 900 } });
    const page = await context.newPage();
    rig.watch(page);
    // The API's lists answered by the test: a fleet of 500 drivers and 2,000 active trips around La Paz.
    const rnd = (i: number, k: number) => (((Math.sin(i * 12.9898 + k * 78.233) * 43758.5453) % 1) + 1) % 1;
    const now = new Date().toISOString();
    const driversBody = {
      next_cursor: null,
      data: Array.from({ length: 500 }, (_, i) => ({
        id: `drv${i}`,
        user_id: `u${i}`,
        display_name: `Driver ${i}`,
        phone: null,
        status: 'approved',
        status_reason: null,
        available: i % 5 !== 0,
        availability_locked: false,
        availability_lock_reason: null,
        vehicle_type: 'motorcycle',
        capacity: 3,
        active_trips: i % 3,
        last_location: pt(-68.2 + rnd(i, 1) * 0.15, -16.56 + rnd(i, 2) * 0.12),
        last_location_at: now,
        last_seen_at: now,
        territory_ids: [],
        created_at: now,
        updated_at: now,
      })),
    };
    const statuses = ['pending', 'assigned', 'accepted', 'picked_up', 'in_transit'];
    const tripsOf = (status: string) => ({
      next_cursor: null,
      data: Array.from({ length: 400 }, (_, j) => {
        const i = statuses.indexOf(status) * 400 + j;
        return {
          id: `trip${i}`,
          status,
          service_mode: 'marketplace',
          source_channel: 'admin',
          territory_id: null,
          merchant_id: null,
          customer_user_id: null,
          order_id: null,
          express_request_id: null,
          driver_id: status === 'pending' ? null : `drv${i % 500}`,
          plan_id: null,
          stop_order: null,
          pickup_location: pt(-68.2 + rnd(i, 3) * 0.15, -16.56 + rnd(i, 4) * 0.12),
          pickup_address: `Pickup ${i}`,
          dropoff_location: pt(-68.2 + rnd(i, 5) * 0.15, -16.56 + rnd(i, 6) * 0.12),
          dropoff_address: `Dropoff ${i}`,
          notes: null,
          delivery_fee: '10.00',
          driver_earning: '8.00',
          currency: 'BOB',
          pickup_pin_locked: false,
          delivery_pin_locked: false,
          status_reason: null,
          assigned_at: null,
          accepted_at: null,
          picked_up_at: null,
          in_transit_at: null,
          completed_at: null,
          cancelled_at: null,
          failed_at: null,
          returned_at: null,
          failure_reason: null,
          failure_note: null,
          created_at: new Date(Date.now() - i * 1000).toISOString(),
          updated_at: now,
        };
      }),
    });
    await page.route(/\/api\/v1\/drivers\?/, (route) => route.fulfill({ json: driversBody }));
    await page.route(/\/api\/v1\/trips\?/, (route) => {
      const status = new URL(route.request().url()).searchParams.get('status') ?? '';
      return route.fulfill({ json: statuses.includes(status) ? tripsOf(status) : { data: [], next_cursor: null } });
    });
    await page.goto(`${base}/console`);
    await page.locator('#lang').selectOption('en');
    await page.getByLabel('Email').fill('dispatch@demo.test');
    await page.getByLabel('Password').fill('Demo-pass-2026');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator('#map[data-drivers="500"][data-trips="2000"]').waitFor({ timeout: 60_000 });

    // Frame times while the user drags the map around and zooms in and out (the canvas redraws 4,500 markers): recorded
    // in test-artifacts/frame-times.json, not asserted (a shared machine without a GPU says little about them).
    await page.evaluate(() => {
      const w = window as unknown as { frames_: number[]; stop_: boolean };
      w.frames_ = [];
      w.stop_ = false;
      let last = performance.now();
      const loop = (now: number) => {
        w.frames_.push(now - last);
        last = now;
        if (!w.stop_) requestAnimationFrame(loop);
      };
      requestAnimationFrame(loop);
    });
    /** Waits until the page has drawn `n` more frames: the map has redrawn after the last gesture. */
    const framesDrawn = async (n: number) => {
      const from = await page.evaluate(() => (window as unknown as { frames_: number[] }).frames_.length);
      await page.waitForFunction((k) => (window as unknown as { frames_: number[] }).frames_.length >= k, from + n);
    };
    const box = (await page.locator('#map').boundingBox())!;
    const cx = box.x + box.width / 2;
    const cy = box.y + box.height / 2;
    for (let round = 0; round < 3; round++) {
      await page.mouse.move(cx, cy);
      await page.mouse.down();
      await page.mouse.move(cx + 200, cy + 120, { steps: 25 });
      await page.mouse.move(cx - 150, cy - 80, { steps: 25 });
      await page.mouse.up();
      await page.mouse.wheel(0, -300);
      await framesDrawn(20);
      await page.mouse.wheel(0, 300);
      await framesDrawn(20);
    }
    const frames = await page.evaluate(() => {
      const w = window as unknown as { frames_: number[]; stop_: boolean };
      w.stop_ = true;
      return w.frames_.slice(1);
    });
    const sorted = [...frames].sort((a, b) => a - b);
    const pick = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
    const figures = {
      frames: frames.length,
      median_ms: pick(0.5),
      p95_ms: pick(0.95),
      max_ms: sorted[sorted.length - 1],
      compressed_script_bytes: compressed,
    };
    writeFileSync(path.join(ARTIFACTS, 'frame-times.json'), `${JSON.stringify(figures, null, 2)}\n`);
    await rig.shot(page, '06-fleet-500-drivers-2000-trips');
    expect(figures.frames).toBeGreaterThan(0);

    // Leaving the map while a zoom animation runs (Leaflet ends it on a 250 ms timer): the removed map must not
    // throw ("Cannot read properties of undefined (reading '_leaflet_pos')"), five times over.
    for (let round = 0; round < 5; round++) {
      await page.mouse.move(cx, cy);
      // Leave the map the moment its zoom animation starts (Leaflet marks its pane then), from inside the page.
      await page.evaluate(() => {
        const w = window as unknown as { leftMidZoom_: boolean };
        w.leftMidZoom_ = false;
        const pane = document.querySelector('#map .leaflet-map-pane')!;
        const seen = new MutationObserver(() => {
          if (!pane.classList.contains('leaflet-zoom-anim')) return;
          seen.disconnect();
          location.hash = '#/settings';
          // Leaflet ends the zoom on its own 250 ms timer, set as the animation starts: no event marks that it ran on
          // the removed map, but a timer queued after it with the same delay runs after it.
          setTimeout(() => (w.leftMidZoom_ = true), 250);
        });
        seen.observe(pane, { attributes: true, attributeFilter: ['class'] });
      });
      await page.mouse.wheel(0, round % 2 ? 300 : -300);
      await page.waitForFunction(() => (window as unknown as { leftMidZoom_: boolean }).leftMidZoom_);
      await page.evaluate(() => {
        location.hash = '#/dispatch';
      });
      await page.locator('#map[data-drivers="500"]').waitFor({ timeout: 30_000 });
    }
    await context.close();
    expect(rig.problems).toEqual([]);
    expect(readFileSync(path.join(ARTIFACTS, 'frame-times.json'), 'utf8')).toContain('p95_ms');
  }, 180_000);
});
