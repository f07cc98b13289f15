import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { api, login } from '../hardening/server-process.js';
import { pt } from '../support.js';
import { axeSerious, breakableStreams, logIn, skipBrowser, startRig, type AxeFinding, type BrowserRig } from './browser.js';

/**
 * The console's behaviour a dispatcher and an administrator meet beyond the happy path, in chromium against the
 * real server (embedded database, demo seed): settings saved against what was last saved, closed lists as selects,
 * role-appropriate screens, a board that shows every column and trouble first, server text in the page's
 * language, the live stream's limits explained, and an axe-core audit of every page (no serious or critical finding).
 */

const SKIP = skipBrowser('test/web/console-defects.browser.test.ts');
/** Open streams per user on the test server: small, so the test can reach the limit. */
const STREAM_LIMIT = 3;

describe.skipIf(SKIP)('console defects in chromium', () => {
  let rig: BrowserRig;
  let base: string;
  let admin: string;
  let driverId: string;
  const notFound: string[] = [];
  const audits: AxeFinding[] = [];

  beforeAll(async () => {
    rig = await startRig('console-defects', { env: { REALTIME_MAX_STREAMS_PER_USER: String(STREAM_LIMIT) } });
    base = rig.base;
    admin = await login(base, 'admin@demo.test');
    driverId = (await api(base, admin, 'GET', '/drivers?status=approved')).body.data[0].id;
  }, 300_000);

  afterAll(async () => {
    await rig?.close();
  });

  async function open(viewport = { width: 1440, height: 900 }): Promise<{ context: BrowserContext; page: Page }> {
    const context = await rig.browser.newContext({ viewport, locale: 'es-BO' });
    await context.addInitScript(breakableStreams);
    const page = await context.newPage();
    rig.watch(page);
    // Every request the pages make answers (no favicon 404 and the like); API 404s the test provokes are not counted.
    page.on('response', (r) => {
      if (r.status() === 404 && !r.url().includes('/api/v1/')) notFound.push(r.url());
    });
    return { context, page };
  }

  async function signIn(page: Page, email: string, password?: string) {
    await page.goto(`${base}/console`);
    await logIn(page, email, password);
  }

  const audit = async (page: Page, name: string) => audits.push(...(await axeSerious(page, name)));

  async function newTrip(address: string, at = pt(-68.12, -16.51)) {
    const r = await api(base, admin, 'POST', '/trips', {
      pickup_location: pt(-68.1335, -16.499),
      pickup_address: 'Av. 16 de Julio 1490',
      dropoff_location: at,
      dropoff_address: address,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body as { id: string; pickup_pin?: string };
  }

  it('settings: putting a value back is saved, closed lists are selects, the currency appears once; the pages pass axe', async () => {
    const { context, page } = await open();
    await signIn(page, 'admin@demo.test');
    await page.getByRole('heading', { level: 1, name: 'Consola de despacho' }).waitFor();
    await audit(page, 'board (administrator)');
    await page.getByRole('link', { name: 'Configuración' }).click();
    const strategy = page.locator('#s-logistics-assignment_strategy');
    await strategy.waitFor();
    for (const id of ['#s-logistics-assignment_strategy', '#s-logistics-failed_delivery_policy', '#s-org-default_country']) {
      expect(await page.locator(id).evaluate((el) => el.tagName), id).toBe('SELECT');
    }
    // Labels in the page's language, not codes.
    expect(await page.locator('#s-logistics-failed_delivery_policy option:checked').textContent()).toBe('Devolver al comercio');
    expect(await page.locator('#s-org-default_country option:checked').textContent()).toBe('Bolivia (BO)');
    // The currency is one field (the organization's); the logistics amounts carry it as their unit.
    expect(await page.locator('.settings-page label', { hasText: /^Moneda$/ }).count()).toBe(1);
    expect(await page.locator('label[for="s-logistics-default_delivery_fee"]').textContent()).toMatch(/\(BOB\)$/);
    await audit(page, 'settings');
    await rig.shot(page, '10-settings-selects');

    const saveLogistics = async () => {
      await page.locator('#s-logistics button[type="submit"]').click();
      await page.locator('.toast', { hasText: 'Guardado' }).last().waitFor();
      await page.locator('.toast').first().waitFor({ state: 'detached', timeout: 15_000 });
    };
    await strategy.selectOption('least_loaded');
    await saveLogistics();
    expect((await api(base, admin, 'GET', '/logistics/settings')).body.assignment_strategy).toBe('least_loaded');
    // Back to the first value: a change against what was last saved.
    await strategy.selectOption('nearest');
    await saveLogistics();
    expect((await api(base, admin, 'GET', '/logistics/settings')).body.assignment_strategy).toBe('nearest');

    await page.locator('#s-org-default_country').selectOption('PE');
    await page.locator('#s-org button[type="submit"]').click();
    await expect.poll(async () => (await api(base, admin, 'GET', '/settings')).body.default_country).toBe('PE');
    await page.locator('#s-org-default_country').selectOption('BO');
    await page.locator('#s-org button[type="submit"]').click();
    await expect.poll(async () => (await api(base, admin, 'GET', '/settings')).body.default_country).toBe('BO');

    await page.getByRole('link', { name: 'Aprobaciones' }).click();
    for (const q of ['q-drivers', 'q-merchants', 'q-documents']) await page.locator(`#${q} .body > :is(ul, p)`).first().waitFor();
    await audit(page, 'approvals');
    await context.close();
  }, 120_000);

  it('a dispatcher sees the approval queues without buttons he cannot use', async () => {
    // A driver waiting for approval.
    const email = `pending-driver-${Date.now()}@demo.test`;
    const user = await api(base, admin, 'POST', '/app-users', {
      email,
      password: 'Pending-driver-2026',
      display_name: 'Conductor Pendiente',
      role: 'repartidor',
    });
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    const profile = await api(base, admin, 'POST', '/drivers', { user_id: user.body.id, vehicle_type: 'motorcycle' });
    expect(profile.status, JSON.stringify(profile.body)).toBe(201);
    const { context, page } = await open();
    await signIn(page, 'dispatch@demo.test');
    await page.getByRole('link', { name: 'Aprobaciones' }).click();
    await page.locator('#q-drivers li', { hasText: 'Conductor Pendiente' }).waitFor();
    expect(await page.locator('.approvals button').count()).toBe(0);
    await page.locator('#q-drivers .note').waitFor();
    await rig.shot(page, '11-approvals-dispatcher');
    await audit(page, 'approvals (dispatcher)');
    // The administrator still decides.
    await page.locator('#logout').click();
    await signIn(page, 'admin@demo.test');
    await page.getByRole('link', { name: 'Aprobaciones' }).click();
    await page.locator('#q-drivers li', { hasText: 'Conductor Pendiente' }).getByRole('button', { name: 'Aprobar' }).waitFor();
    await context.close();
  }, 120_000);

  it('drivers and customers are told where to go instead of getting an empty console', async () => {
    const { context, page } = await open();
    const streams: string[] = [];
    page.on('request', (r) => r.url().includes('/realtime/') && streams.push(r.url()));
    for (const [email, where] of [
      ['driver@demo.test', '/driver'],
      ['customer@demo.test', null],
    ] as const) {
      await signIn(page, email);
      await page.locator('#not-staff').waitFor();
      if (where) expect(await page.locator(`#not-staff a[href="${where}"]`).count()).toBe(1);
      expect(await page.locator('#live').count()).toBe(0);
      expect(await page.evaluate(() => sessionStorage.getItem('console.session'))).toBeNull();
      await rig.shot(page, `12-not-staff-${email.split('@')[0]}`);
      await audit(page, `not staff (${email})`);
    }
    expect(streams).toEqual([]);
    await context.close();
  }, 120_000);

  it('server errors and network failures in Spanish; a refused driver candidate explained in Spanish', async () => {
    const { context, page } = await open();
    await page.goto(`${base}/console`);
    // The page names its icon (no request for a missing /favicon.ico).
    expect(await page.locator('link[rel~="icon"][href^="data:image/svg+xml"]').count()).toBe(1);
    await audit(page, 'login');
    await rig.shot(page, '13-login');
    await logIn(page, 'dispatch@demo.test', 'wrong-password-1');
    await expect.poll(() => page.locator('#login-error').textContent()).toContain('Correo o contraseña incorrectos');
    expect(await page.locator('#login-error').textContent()).not.toMatch(/Wrong|login or password/);
    await page.route('**/api/v1/auth/login', (r) => r.abort('failed'));
    await page.getByRole('button', { name: 'Iniciar sesión' }).click();
    await expect.poll(() => page.locator('#login-error').textContent()).toContain('Sin conexión con el servidor');
    expect(await page.locator('#login-error').textContent()).not.toContain('Failed to fetch');
    await page.unroute('**/api/v1/auth/login');

    // The demo driver full (capacity 1, one trip): the candidates list says why in Spanish.
    expect((await api(base, admin, 'PATCH', `/drivers/${driverId}`, { capacity: 1 })).status).toBe(200);
    const driverToken = await login(base, 'driver@demo.test');
    expect((await api(base, driverToken, 'POST', '/driver/availability', { available: true })).status).toBeLessThan(300);
    const busy = await newTrip('Calle Ocupada 1');
    expect((await api(base, admin, 'POST', `/trips/${busy.id}/assign`, { driver_id: driverId })).status).toBe(200);
    const other = await newTrip('Calle Espera 2');
    await logIn(page, 'dispatch@demo.test');
    await page.locator(`.card[data-trip-id="${other.id}"] button.open`).click();
    const row = page.locator(`#candidates tr[data-driver-id="${driverId}"]`);
    await expect.poll(() => row.textContent()).toContain('No apto: sin capacidad libre');
    await audit(page, 'trip detail');
    await rig.shot(page, '14-candidates-es');
    // The dialog opens on its heading: Enter does not auto-assign the trip.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('detail-title');
    const assigns: string[] = [];
    page.on('request', (r) => r.url().includes('/auto-assign') && assigns.push(r.url()));
    await page.keyboard.press('Enter');
    await page.keyboard.press('Escape');
    await page.locator('#detail:not([open])').waitFor({ state: 'attached' });
    expect(assigns).toEqual([]);
    expect((await api(base, admin, 'GET', `/trips/${other.id}`)).body.status).toBe('pending');
    for (const id of [busy.id, other.id])
      expect((await api(base, admin, 'POST', `/trips/${id}/status`, { status: 'cancelled', reason: 'test' })).status).toBe(200);
    expect((await api(base, admin, 'PATCH', `/drivers/${driverId}`, { capacity: 5 })).status).toBe(200);
    await context.close();
  }, 120_000);

  it('at 1440 px every board column is reachable with a visible hint; the plan is decided without hunting, its stops named by address, counts in correct Spanish', async () => {
    expect((await api(base, admin, 'PATCH', `/drivers/${driverId}`, { capacity: 5 })).status).toBe(200);
    const { context, page } = await open({ width: 1440, height: 900 });
    const a = await newTrip('Calle Plan Norte 11', pt(-68.115, -16.5));
    const b = await newTrip('Calle Plan Sur 22', pt(-68.14, -16.52));
    await signIn(page, 'dispatch@demo.test');
    const board = page.locator('#board');
    await page.locator(`.card[data-trip-id="${a.id}"]`).waitFor();
    await page.locator('#board-hint').waitFor({ state: 'visible' });
    const chips = page.locator('#col-nav button[data-col]');
    const ids = await chips.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.col!));
    expect(ids).toEqual(['trouble', 'pending', 'assigned', 'accepted', 'picked_up', 'in_transit', 'completed', 'cancelled']);
    for (const id of [...ids].reverse().concat(ids)) {
      await page.locator(`#col-nav button[data-col="${id}"]`).click();
      await expect
        .poll(
          async () => {
            const bb = (await board.boundingBox())!;
            const cb = (await page.locator(`.column[data-status="${id}"]`).boundingBox())!;
            return cb.x >= bb.x - 1 && cb.x + cb.width <= bb.x + bb.width + 1;
          },
          { message: `column ${id} scrolled into view` },
        )
        .toBe(true);
    }
    // The board scrolls from the keyboard too (axe: scrollable region focusable).
    expect(await board.getAttribute('tabindex')).toBe('0');

    await page.locator(`.card[data-trip-id="${a.id}"] input.pick`).check();
    await expect.poll(() => page.locator('#selection').textContent()).toBe('1 seleccionado');
    await page.locator(`.card[data-trip-id="${b.id}"] input.pick`).check();
    await expect.poll(() => page.locator('#selection').textContent()).toBe('2 seleccionados');
    await page.locator('#optimize:not([disabled])').click();
    const commit = page.locator('#plan:not([hidden]) #commit-plan:not([disabled])');
    await commit.waitFor();
    // Visible in the window as it is (no scrolling), and not covered.
    const cb = (await commit.boundingBox())!;
    expect(cb.y + cb.height).toBeLessThanOrEqual(900);
    expect(
      await page.evaluate(
        ([x, y]) => (document.elementFromPoint(x!, y!) as HTMLElement | null)?.closest('#commit-plan') !== null,
        [cb.x + cb.width / 2, cb.y + cb.height / 2],
      ),
    ).toBe(true);
    const stops = await page.locator('#plan .stops li').allTextContents();
    expect(stops.length).toBe(4);
    for (const s of stops) expect(s).toMatch(/Calle Plan (Norte 11|Sur 22)|Av\. 16 de Julio 1490/);
    expect(stops.join(' ')).not.toMatch(/#[0-9a-z]{6}/);
    await audit(page, 'plan');
    await rig.shot(page, '15-board-1440-plan');
    await commit.click();
    await page.locator('.toast', { hasText: '2 asignados' }).waitFor();
    for (const id of [a.id, b.id])
      expect((await api(base, admin, 'POST', `/trips/${id}/status`, { status: 'cancelled', reason: 'test' })).status).toBe(200);
    await context.close();
  }, 120_000);

  it('the stream limit is explained and retried with back-off; a revoked session says it expired', async () => {
    // A dispatcher of its own: no stream of another test of this file counts against his limit.
    const email = `limit-dispatcher-${Date.now()}@demo.test`;
    const created = await api(base, admin, 'POST', '/app-users', {
      email,
      password: 'Limit-dispatch-2026',
      display_name: 'Despachador Límite',
      role: 'administrator',
      dispatch: true,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const dispatch = await login(base, email, 'Limit-dispatch-2026');
    // The dispatcher's other tabs: every allowed stream already open.
    const others: AbortController[] = [];
    for (let i = 0; i < STREAM_LIMIT; i++) {
      const tok = await api(base, dispatch, 'POST', '/realtime/tokens', { stream: 'organization' });
      expect(tok.status).toBe(201);
      const ac = new AbortController();
      const res = await fetch(`${base}/api/v1/realtime/organization/stream?stream_token=${tok.body.stream_token}`, { signal: ac.signal });
      expect(res.status).toBe(200);
      // Read and thrown away: a stream nobody reads is dropped by the server once its buffer fills (the
      // organization's events of the earlier tests), and the limit would no longer be reached.
      void res.body!.pipeTo(new WritableStream()).catch(() => undefined);
      others.push(ac);
    }
    const { context, page } = await open();
    const attempts: number[] = [];
    page.on('response', (r) => r.url().includes('/realtime/organization/stream') && attempts.push(r.status()));
    await signIn(page, email, 'Limit-dispatch-2026');
    const live = page.locator('#live');
    await page.locator('#live[data-reason="limit"]').waitFor();
    expect(await page.locator('#live-reason').textContent()).toContain(`límite ${STREAM_LIMIT}`);
    // Not every second: at least the server's retry_after (5 s), growing.
    expect(Number(await live.getAttribute('data-retry-ms'))).toBeGreaterThanOrEqual(5000);
    await expect.poll(() => attempts.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
    expect(attempts.every((s) => s === 429)).toBe(true);
    expect(Number(await live.getAttribute('data-retry-ms'))).toBeGreaterThanOrEqual(5000);
    await rig.shot(page, '16-stream-limit');
    // A tab closes: the console goes live.
    others.pop()!.abort();
    await page.locator('#live[data-live="true"]').waitFor({ timeout: 60_000 });
    for (const ac of others) ac.abort();

    // The session is revoked elsewhere (logout of this session): the console says it expired.
    const token = await page.evaluate(() => (JSON.parse(sessionStorage.getItem('console.session')!) as { access: string }).access);
    expect((await api(base, token, 'POST', '/auth/logout')).status).toBeLessThan(300);
    await page.locator('#login-notice', { hasText: 'Tu sesión ha caducado' }).waitFor({ timeout: 30_000 });
    await rig.shot(page, '17-session-expired');
    await context.close();
  }, 150_000);

  it("a failed delivery stays in sight: trouble column, map, search, the driver's load explained, the open detail updated live; a link reissue asks first", async () => {
    const driverToken = await login(base, 'driver@demo.test');
    expect((await api(base, driverToken, 'POST', '/driver/availability', { available: true })).status).toBeLessThan(300);
    expect((await api(base, driverToken, 'POST', '/driver/location', { location: pt(-68.121, -16.507) })).status).toBeLessThan(300);
    const trip = await newTrip('Calle Fallida 9', pt(-68.118, -16.512));
    expect(trip.pickup_pin).toBeTruthy();
    expect((await api(base, admin, 'POST', `/trips/${trip.id}/assign`, { driver_id: driverId })).status).toBe(200);
    expect((await api(base, driverToken, 'POST', `/driver/trips/${trip.id}/accept`)).status).toBe(200);
    expect((await api(base, driverToken, 'POST', `/trips/${trip.id}/verify-pickup`, { pin: trip.pickup_pin })).status).toBe(200);
    expect((await api(base, driverToken, 'POST', `/driver/trips/${trip.id}/start-delivery`)).status).toBe(200);

    const { context, page } = await open();
    await signIn(page, 'dispatch@demo.test');
    await page.locator('#live[data-live="true"]').waitFor();
    await page.locator(`.column[data-status="in_transit"] .card[data-trip-id="${trip.id}"] button.open`).click();
    await expect.poll(() => page.locator('#detail-status').textContent()).toBe('En camino');
    // The driver cannot deliver: the open detail follows (no reload).
    expect((await api(base, driverToken, 'POST', `/driver/trips/${trip.id}/fail-delivery`, { reason: 'recipient_absent' })).status).toBe(
      200,
    );
    await expect.poll(() => page.locator('#detail-status').textContent()).toBe('Devolviendo');
    await expect.poll(() => page.locator('#detail-facts').textContent()).toContain('destinatario ausente');
    await page.keyboard.press('Escape');
    const card = page.locator(`.column[data-status="trouble"] .card[data-trip-id="${trip.id}"]`);
    await card.waitFor();
    expect(await card.textContent()).toContain('Devolviendo · destinatario ausente');
    expect(Number(await page.locator('#map').getAttribute('data-trips'))).toBeGreaterThanOrEqual(1);
    // The driver's load names the trip that keeps him busy, and how old his GPS fix is.
    await page.locator('details.driver-list summary').click();
    const row = page.locator(`tr[data-driver-id="${driverId}"]`);
    await expect.poll(() => row.locator('.load-trips').textContent()).toContain('Devolviendo: Calle Fallida 9');
    expect(await row.locator('td.gps').textContent()).toMatch(/^hace \d+ (s|min)/);
    await audit(page, 'board with a failed delivery');
    await rig.shot(page, '18-trouble-column');
    // Search and the status filter find it; so does a reload.
    await page.locator('#f-search').fill('Fallida');
    await expect.poll(() => page.locator('#board .card').count()).toBe(1);
    await page.locator('#f-search').fill('');
    await page.locator('#f-status').selectOption('trouble');
    await card.waitFor();
    await page.locator('#f-status').selectOption('');
    await page.reload();
    await card.waitFor();
    // The exceptions lane counts it and closes the return (the goods are back): still on the board, as returned.
    await page.locator('#exc-counts [data-kind="returning"][data-count="1"]').waitFor();
    await rig.shot(page, '18b-exceptions-lane');
    await page.locator(`#exc-list li[data-kind="returning"][data-trip-id="${trip.id}"] .act-close-return`).click();
    await expect.poll(async () => (await api(base, admin, 'GET', `/trips/${trip.id}`)).body.status).toBe('returned');
    await expect.poll(() => card.locator('.badge').textContent()).toContain('Devuelto');
    await page.locator('#exc-counts [data-kind="returning"][data-count="0"]').waitFor();

    // A delivery PIN locked after wrong attempts: counted, and unlocked from the lane.
    const locked = await newTrip('Calle Bloqueo 4', pt(-68.119, -16.511));
    expect((await api(base, admin, 'POST', `/trips/${locked.id}/assign`, { driver_id: driverId })).status).toBe(200);
    expect((await api(base, driverToken, 'POST', `/driver/trips/${locked.id}/accept`)).status).toBe(200);
    for (let i = 0; i < 5; i++)
      await api(base, driverToken, 'POST', `/trips/${locked.id}/verify-pickup`, {
        pin: '000000' === locked.pickup_pin ? '111111' : '000000',
      });
    expect((await api(base, admin, 'GET', `/trips/${locked.id}`)).body.pickup_pin_locked).toBe(true);
    await page.reload();
    await page.locator('#exc-counts [data-kind="pin_locked"][data-count="1"]').waitFor();
    await page.locator(`#exc-list li[data-kind="pin_locked"][data-trip-id="${locked.id}"] .act-reset-pin`).click();
    await expect.poll(async () => (await api(base, admin, 'GET', `/trips/${locked.id}`)).body.pickup_pin_locked).toBe(false);
    await page.locator('#exc-counts [data-kind="pin_locked"][data-count="0"]').waitFor();
    expect((await api(base, admin, 'POST', `/trips/${locked.id}/status`, { status: 'cancelled', reason: 'test' })).status).toBe(200);

    // The recipient link already sent: issuing another asks first and says the old one stops working.
    const pending = await newTrip('Calle Enlace 5');
    expect([200, 201]).toContain((await api(base, admin, 'POST', `/trips/${pending.id}/recipient-link`, {})).status);
    await page.locator(`.card[data-trip-id="${pending.id}"] button.open`).click();
    const posts: string[] = [];
    page.on('request', (r) => r.method() === 'POST' && r.url().includes('/recipient-link') && posts.push(r.url()));
    await page.locator('#track-link').waitFor();
    const first = (await page.locator('#track-link').getAttribute('href'))!;
    await page.locator('#issue-link', { hasText: 'Crear enlace nuevo' }).click();
    await expect.poll(() => page.locator('#reissue-confirm').textContent()).toContain('dejará de funcionar');
    await audit(page, 'link reissue');
    await rig.shot(page, '19-link-reissue');
    await page.locator('#reissue-no').click();
    expect(await page.locator('#reissue-confirm').isHidden()).toBe(true);
    expect(posts.length).toBe(0);
    await page.locator('#issue-link').click();
    await page.locator('#reissue-yes').click();
    await expect.poll(() => page.locator('#track-link').getAttribute('href')).not.toBe(first);
    expect(posts.length).toBe(1);
    expect((await api(base, null, 'GET', `/public/tracking/${first.split('/').pop()}`)).status).toBe(404);
    expect((await api(base, admin, 'POST', `/trips/${pending.id}/status`, { status: 'cancelled', reason: 'test' })).status).toBe(200);
    await context.close();
  }, 150_000);

  it('a trip rejected again is counted in the lane; assigned once more, its recipient can be called and it is unassigned from its open detail', async () => {
    // A second driver: rejections count once per driver.
    const email = `second-driver-${Date.now()}@demo.test`;
    const user = await api(base, admin, 'POST', '/app-users', {
      email,
      password: 'Second-driver-2026',
      display_name: 'Segundo Conductor',
      role: 'repartidor',
    });
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    const second = await api(base, admin, 'POST', '/drivers', { user_id: user.body.id, vehicle_type: 'motorcycle' });
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    expect((await api(base, admin, 'POST', `/drivers/${second.body.id}/approve`, {})).status).toBe(200);
    expect((await api(base, admin, 'POST', `/drivers/${second.body.id}/availability`, { available: true })).status).toBe(200);
    const drivers = [
      { id: driverId, token: await login(base, 'driver@demo.test') },
      { id: second.body.id as string, token: await login(base, email, 'Second-driver-2026') },
    ];
    expect((await api(base, drivers[0]!.token, 'POST', '/driver/availability', { available: true })).status).toBeLessThan(300);
    const created = await api(base, admin, 'POST', '/trips', {
      pickup_location: pt(-68.1335, -16.499),
      pickup_address: 'Av. 16 de Julio 1490',
      dropoff_location: pt(-68.12, -16.508),
      dropoff_address: 'Calle Rechazos 12',
      recipient_name: 'Rosa Mamani',
      recipient_phone: '+59170011122',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const trip = created.body as { id: string };
    for (const [i, d] of drivers.entries()) {
      expect((await api(base, admin, 'POST', `/trips/${trip.id}/assign`, { driver_id: d.id })).status).toBe(200);
      expect(
        (await api(base, d.token, 'POST', `/driver/trips/${trip.id}/reject`, { reason: ['demasiado lejos', 'sin batería'][i] })).status,
      ).toBe(200);
    }
    const { context, page } = await open();
    await signIn(page, 'dispatch@demo.test');
    await page.locator('#live[data-live="true"]').waitFor();
    await page.locator('#exc-counts [data-kind="rejected_again"][data-count="1"]').waitFor();
    await page.locator(`#exc-list li[data-kind="rejected_again"][data-trip-id="${trip.id}"]`).waitFor();
    await rig.shot(page, '18c-rejected-again');
    // Given to the driver once more (by another dispatcher): the open detail offers to take it back.
    expect((await api(base, admin, 'POST', `/trips/${trip.id}/assign`, { driver_id: driverId })).status).toBe(200);
    await page.locator(`.card[data-trip-id="${trip.id}"] button.open`).click();
    await expect.poll(() => page.locator('#detail-status').textContent()).toBe('Asignado');
    // The recipient can be called or messaged from the detail.
    expect(await page.locator('#detail-actions .act-call').getAttribute('href')).toBe('tel:+59170011122');
    expect(await page.locator('#detail-actions .act-message').getAttribute('href')).toBe('sms:+59170011122');
    expect(await page.locator('#detail-facts').textContent()).toContain('Rosa Mamani · +59170011122');
    await page.locator('#detail-actions .act-unassign').click();
    await expect.poll(async () => (await api(base, admin, 'GET', `/trips/${trip.id}`)).body.status).toBe('pending');
    await expect.poll(() => page.locator('#detail-status').textContent()).toBe('Pendiente');
    expect((await api(base, admin, 'GET', `/trips/${trip.id}`)).body.driver_id).toBeNull();
    await audit(page, 'trip detail after unassign');
    expect((await api(base, admin, 'POST', `/trips/${trip.id}/status`, { status: 'cancelled', reason: 'test' })).status).toBe(200);
    expect((await api(base, admin, 'POST', `/drivers/${second.body.id}/availability`, { available: false })).status).toBe(200);
    await context.close();
  }, 120_000);

  it('the tracking page on a phone: no drop-off ETA while the driver heads to the store, then the time to the recipient', async () => {
    const driverToken = await login(base, 'driver@demo.test');
    expect((await api(base, driverToken, 'POST', '/driver/availability', { available: true })).status).toBeLessThan(300);
    expect((await api(base, admin, 'PATCH', `/drivers/${driverId}`, { capacity: 5 })).status).toBe(200);
    const trip = await newTrip('Calle Destino 3', pt(-68.11, -16.52));
    expect((await api(base, admin, 'POST', `/trips/${trip.id}/assign`, { driver_id: driverId })).status).toBe(200);
    expect((await api(base, driverToken, 'POST', `/driver/trips/${trip.id}/accept`)).status).toBe(200);
    expect((await api(base, driverToken, 'POST', '/driver/location', { location: pt(-68.14, -16.49) })).status).toBeLessThan(300);
    const link = await api(base, admin, 'POST', `/trips/${trip.id}/recipient-link`, {});
    expect([200, 201]).toContain(link.status);
    const context = await rig.browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
      locale: 'es-BO',
    });
    const page = await context.newPage();
    page.on('pageerror', (e) => rig.problems.push(`pageerror: ${e.stack ?? e.message}`));
    page.on('response', (r) => r.status() === 404 && !r.url().includes('/api/v1/') && notFound.push(r.url()));
    await page.goto(new URL(link.body.url, base).toString());
    await page.locator('#t-status[data-status="accepted"]').waitFor();
    // Heading to the store: the page says so, and the time it gives is to the recipient's address (via the store),
    // not the ETA to the next stop (the store).
    await page.locator('#t-pickup-first').waitFor();
    const view = (await api(base, null, 'GET', new URL(link.body.url, base).pathname.replace('/api/v1', ''))).body;
    expect(view.next_stop).toBe('pickup');
    expect(view.eta_dropoff_at).toBeTruthy();
    const toRecipientMin = (new Date(view.eta_dropoff_at).getTime() - Date.now()) / 60_000;
    expect(toRecipientMin).toBeGreaterThan(view.eta_seconds / 60);
    const shown = Number((await page.locator('#t-eta').textContent())!.match(/en (\d+) min/)![1]);
    expect(Math.abs(shown - toRecipientMin)).toBeLessThanOrEqual(1.5);
    expect(shown).toBeGreaterThan(Math.round(view.eta_seconds / 60));
    await audit(page, 'tracking (to the store)');
    await rig.shot(page, '20-tracking-to-store');
    expect((await api(base, driverToken, 'POST', `/trips/${trip.id}/verify-pickup`, { pin: trip.pickup_pin })).status).toBe(200);
    expect((await api(base, driverToken, 'POST', `/driver/trips/${trip.id}/start-delivery`)).status).toBe(200);
    await page.reload();
    await expect.poll(() => page.locator('#t-eta').textContent()).toMatch(/^Llega a tu dirección en \d+ min$/);
    // The recipient's address on the map, next to the driver.
    await page.locator('#t-map[data-destination="-16.52,-68.11"]').waitFor();
    expect(await page.locator('#t-pickup-first').count()).toBe(0);
    await audit(page, 'tracking (to the recipient)');
    await rig.shot(page, '21-tracking-to-recipient');
    await context.close();
  }, 120_000);

  it('no page error, no missing resource (favicon), no serious or critical axe finding', () => {
    expect(rig.problems).toEqual([]);
    expect(notFound).toEqual([]);
    expect(audits).toEqual([]);
  });
});
