import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, login } from '../hardening/server-process.js';
import { axeSerious, logIn, skipBrowser, startRig, type BrowserRig } from './browser.js';

/**
 * The console's hubs view (#/hubs) and the plan's start and end choice in a real browser (Debian's chromium through
 * playwright-core) against the real server with the demo seed: creating a hub with its hours, hours that close before they
 * open and a place outside every territory refused and explained in Spanish, the hub offered as a route's start and end;
 * Spanish and English. Screenshots go to test-artifacts/ (gitignored).
 */

const SKIP = skipBrowser('test/web/console-hubs.browser.test.ts');

describe.skipIf(SKIP)('console hubs in chromium', () => {
  let rig: BrowserRig;

  beforeAll(async () => {
    rig = await startRig('console-hubs', { shots: 'console-hubs-' });
  }, 300_000);

  afterAll(async () => {
    await rig?.close();
  });

  it('creates a hub with its hours, explains refusals, and offers it as the start and end of planned routes; Spanish and English', async () => {
    const base = rig.base;
    const admin = await login(base, 'admin@demo.test');
    const context = await rig.browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'es-BO' });
    const page = await context.newPage();
    rig.watch(page);
    await page.goto(`${base}/console`);
    await logIn(page, 'admin@demo.test');
    await page.getByRole('link', { name: 'Centros' }).click();
    await page.getByRole('heading', { name: 'Nuevo centro' }).waitFor();
    // At 1280 px the header with every tab stays one line: the logout button beside the title, not under it.
    const rowOf = async (sel: string) => (await page.locator(sel).boundingBox())!;
    const [brand, logout] = [await rowOf('.top .brand'), await rowOf('#logout')];
    expect(logout.y).toBeLessThan(brand.y + brand.height);
    await page.getByText('Todavía no hay centros.').waitFor();

    await page.getByLabel('Nombre').fill('Depósito Central');
    await page.getByLabel('Dirección').fill('Av. Camacho 1200, La Paz');
    await page.getByLabel('Latitud').fill('-16.5');
    await page.getByLabel('Longitud').fill('-68.13');
    // Monday closes before it opens: refused in the page, nothing sent
    await page.locator('#hub-close-1').fill('07:00');
    await page.getByRole('button', { name: 'Guardar centro' }).click();
    await expect.poll(() => page.locator('.toast').last().textContent()).toContain('Lunes: cierra antes de abrir');
    expect((await api(base, admin, 'GET', '/hubs')).body.data).toEqual([]);
    await page.locator('#hub-close-1').fill('19:00');
    // A place outside every territory: the server's refusal, in Spanish
    await page.getByLabel('Longitud').fill('-60');
    await page.getByRole('button', { name: 'Guardar centro' }).click();
    await expect.poll(() => page.locator('.toast').last().textContent()).toContain('dentro de uno de los territorios');
    expect((await api(base, admin, 'GET', '/hubs')).body.data).toEqual([]);
    await page.getByLabel('Longitud').fill('-68.13');
    await page.getByRole('button', { name: 'Guardar centro' }).click();
    await expect.poll(() => page.locator('.toast').last().textContent()).toContain('Centro guardado');
    const [hub] = (await api(base, admin, 'GET', '/hubs')).body.data;
    expect(hub).toMatchObject({ name: 'Depósito Central', active: true });
    expect(hub.opening_hours).toEqual([
      { day: 1, open: '08:00', close: '19:00' },
      ...[2, 3, 4, 5, 6].map((day) => ({ day, open: '08:00', close: '18:00' })),
    ]);
    const item = page.locator(`#hub-list li[data-hub-id="${hub.id}"]`);
    await item.waitFor();
    expect(await item.textContent()).toContain('Lun 08:00–19:00');
    expect(await item.textContent()).toContain('Dom cerrado');
    for (const sel of ['#hub-name', '#hub-lat', '#hub-open-1', '#hub-save', `#hub-list li[data-hub-id="${hub.id}"] button`]) {
      expect((await page.locator(sel).boundingBox())!.height, sel).toBeGreaterThanOrEqual(44);
    }
    expect(await axeSerious(page, 'hubs view')).toEqual([]);
    await rig.shot(page, '01-es');

    // The plan form offers the hubs as where routes start and end; a plan from and back to one (open all day: no declared hours).
    const base24 = (
      await api(base, admin, 'POST', '/hubs', {
        name: 'Base 24 h',
        address: 'Calle 5',
        location: { type: 'Point', coordinates: [-68.12, -16.49] },
      })
    ).body;
    const trip = await api(base, admin, 'POST', '/trips', {
      pickup_location: { type: 'Point', coordinates: [-68.1335, -16.499] },
      pickup_address: 'Av. 16 de Julio 1490',
      dropoff_location: { type: 'Point', coordinates: [-68.125, -16.505] },
      dropoff_address: 'Calle Centro 7',
    });
    expect(trip.status).toBe(201);
    await page.getByRole('link', { name: 'Despacho' }).click();
    const start = page.locator('#plan-start');
    await expect.poll(() => start.locator('option').count()).toBe(3);
    expect(await start.locator('option').allTextContents()).toEqual(['Posición del repartidor', 'Base 24 h', 'Depósito Central']);
    expect(await page.locator('#plan-end option').allTextContents()).toEqual(['Última parada', 'Base 24 h', 'Depósito Central']);
    await start.selectOption(base24.id);
    await page.locator('#plan-end').selectOption(base24.id);
    expect((await start.boundingBox())!.height).toBeGreaterThanOrEqual(44);
    const pick = page.locator(`.column[data-status="pending"] .card[data-trip-id="${trip.body.id}"] input.pick`);
    await pick.waitFor();
    await pick.check();
    await page.locator('#optimize:not([disabled])').click();
    await page.locator('#plan:not([hidden]) #commit-plan:not([disabled])').waitFor();
    await expect.poll(() => page.locator('#plan .route-hubs').textContent()).toMatch(/^Salida de Base 24 h: .+ · regreso a Base 24 h: .+$/);
    await rig.shot(page, '02-plan-ends');

    // English.
    await page.locator('#lang').selectOption('en');
    await page.getByRole('link', { name: 'Hubs' }).click();
    await page.getByRole('heading', { name: 'New hub' }).waitFor();
    await item.waitFor();
    expect(await item.textContent()).toContain('Sun closed');
    expect((await page.locator('label[for="hub-active"]').boundingBox())!.height).toBeGreaterThanOrEqual(44);
    await rig.shot(page, '03-en');
    await context.close();
    expect(rig.problems).toEqual([]);
  }, 240_000);
});
