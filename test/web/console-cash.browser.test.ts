import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { api, login, startServer, stopServer, type ServerProcess } from '../hardening/server-process.js';
import { axeSerious } from './browser.js';

/**
 * The console's cash view (#/cash) in a real browser (Debian's chromium through playwright-core) against the real server on the
 * embedded database with the demo seed: the cash each driver holds against his limit, the day's reconciliation, recording a
 * hand-in (a refused amount explained in the page's language, then a good one), the workbook download, Spanish and English.
 * Screenshots go to test-artifacts/ (gitignored).
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const ARTIFACTS = path.join(ROOT, 'test-artifacts');
const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find(
  (p): p is string => !!p && existsSync(p),
);
if (!CHROMIUM)
  console.warn(
    'SKIPPED test/web/console-cash.browser.test.ts: no chromium found (install it: apt-get install -y chromium, or set CHROMIUM_PATH)',
  );
const ON_POSTGRES = !!process.env.TEST_DATABASE_URL;
if (CHROMIUM && ON_POSTGRES)
  console.warn(
    'SKIPPED test/web/console-cash.browser.test.ts on the PostgreSQL pass: its server uses the embedded database (run in the PGlite pass)',
  );

describe.skipIf(!CHROMIUM || ON_POSTGRES)('console cash view in chromium', () => {
  let server: ServerProcess;
  let browser: Browser;
  let dataDir: string;
  const problems: string[] = [];

  beforeAll(async () => {
    const built = spawnSync(process.execPath, [path.join(ROOT, 'scripts/build-if-stale.mjs'), '--web'], { cwd: ROOT, encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`web build failed:\n${built.stdout}\n${built.stderr}`);
    mkdirSync(ARTIFACTS, { recursive: true });
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'console-cash-'));
    server = await startServer({ databaseUrl: '', env: { DATA_DIR: dataDir, MAP_TILE_URL: 'none' }, timeoutMs: 240_000 });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    if (server) await stopServer(server);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  function watch(page: Page) {
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.stack ?? e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) problems.push(`csp: ${m.text()}`);
    });
  }
  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(ARTIFACTS, `console-cash-${name}.png`), fullPage: true });

  it("shows cash in hand against the limit and the day's reconciliation, records a hand-in (a refused one explained), downloads the workbook; Spanish and English", async () => {
    const base = server.baseUrl;
    const [admin, merchant, customer, driverToken] = await Promise.all([
      login(base, 'admin@demo.test'),
      login(base, 'merchant@demo.test'),
      login(base, 'customer@demo.test'),
      login(base, 'driver@demo.test'),
    ]);
    const branch = (await api(base, merchant, 'GET', '/merchant/branches')).body.data[0];
    const item = (await api(base, merchant, 'GET', '/merchant/catalog')).body.data[0];
    const address = (await api(base, customer, 'GET', '/customer/addresses')).body.data[0];
    const driver = (await api(base, admin, 'GET', '/drivers?status=approved')).body.data[0];
    expect((await api(base, admin, 'PATCH', `/drivers/${driver.id}`, { capacity: 5 })).status).toBe(200);
    /** A cash order delivered by the demo driver, who collects `short` less than the total (with a reason) when given. */
    const cashDelivery = async (short?: string) => {
      const o = await api(base, customer, 'POST', '/customer/orders', {
        branch_id: branch.id,
        address_id: address.id,
        items: [{ catalog_item_id: item.id, quantity: 1 }],
        payment_destination: 'cash',
      });
      expect(o.status, JSON.stringify(o.body)).toBe(201);
      let tripId = '';
      for (const status of ['confirmed', 'preparing', 'ready']) {
        const r = await api(base, merchant, 'PATCH', `/merchant/orders/${o.body.id}/status`, { status });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        tripId = r.body.trip_id;
      }
      expect(tripId).toBeTruthy();
      expect(
        (
          await api(base, admin, 'POST', `/trips/${tripId}/assign`, {
            driver_id: driver.id,
            cash_limit_override: { reason: 'browser test' },
          })
        ).status,
      ).toBe(200);
      expect((await api(base, driverToken, 'POST', `/driver/trips/${tripId}/accept`)).status).toBe(200);
      const trip = (await api(base, merchant, 'GET', `/trips/${tripId}`)).body;
      expect((await api(base, driverToken, 'POST', `/trips/${tripId}/verify-pickup`, { pin: trip.pickup_pin })).status).toBe(200);
      expect((await api(base, driverToken, 'POST', `/driver/trips/${tripId}/start-delivery`)).status).toBe(200);
      const pin = (await api(base, customer, 'GET', `/trips/${tripId}`)).body.delivery_pin;
      const due = Number(trip.cash_to_collect);
      const collected = short ? (due - Number(short)).toFixed(2) : trip.cash_to_collect;
      const r = await api(base, driverToken, 'POST', `/trips/${tripId}/verify-delivery`, {
        pin,
        cash_collected: collected,
        ...(short ? { cash_discrepancy_reason: 'sin cambio' } : {}),
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return o.body.total as string;
    };
    await cashDelivery();
    await cashDelivery('1.00');
    const before = (await api(base, admin, 'GET', `/drivers/${driver.id}/cash`)).body;
    expect(before.open_shortfalls).toBe(1);
    // His own limit at what he holds: the console flags him.
    expect((await api(base, admin, 'PATCH', `/drivers/${driver.id}`, { cash_limit: before.cash_in_hand })).status).toBe(200);

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'es-BO', acceptDownloads: true });
    const page = await context.newPage();
    watch(page);
    await page.goto(`${base}/console`);
    await page.getByLabel('Correo electrónico').fill('admin@demo.test');
    await page.getByLabel('Contraseña').fill('Demo-pass-2026');
    await page.getByRole('button', { name: 'Iniciar sesión' }).click();
    await page.getByRole('link', { name: 'Efectivo' }).click();
    const row = page.locator(`#cash-in-hand tr[data-driver="${driver.id}"]`);
    await row.waitFor();
    const money = (s: string) => Number(s).toLocaleString('es-BO', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    expect(await row.locator('td').nth(1).textContent()).toBe(`${money(before.cash_in_hand)} ${before.currency}`);
    expect(await row.locator('.badge.alert').textContent()).toContain('En el límite');
    expect(await row.locator('td').nth(3).textContent()).toBe('1');
    const rec = page.locator(`#cash-reconciliation tbody tr[data-driver="${driver.id}"]`);
    await rec.waitFor();
    expect(await rec.locator('td').nth(2).textContent()).toBe(money(before.collected));
    expect(await rec.getAttribute('class')).toBe('discrepancy');
    expect(await page.locator('#cash-reconciliation tfoot th').first().textContent()).toBe('Totales');
    // Touch targets: the hand-in button and the filters are at least 44 px high.
    for (const sel of [`#cash-in-hand tr[data-driver="${driver.id}"] button.remit`, '#cash-day', '#cash-territory', '#cash-download']) {
      expect((await page.locator(sel).boundingBox())!.height, sel).toBeGreaterThanOrEqual(44);
    }
    await shot(page, '01-es');

    // A hand-in larger than the cash in hand: refused, explained in Spanish, nothing recorded.
    await row.locator('button.remit').click();
    const dialog = page.locator('#remit-dialog');
    await dialog.locator('#remit-amount').fill(String(Number(before.cash_in_hand) + 10));
    await dialog.getByRole('button', { name: 'Registrar' }).click();
    await expect.poll(() => dialog.locator('#remit-error').textContent()).toContain('supera el efectivo en mano');
    expect((await api(base, admin, 'GET', `/drivers/${driver.id}/cash`)).body.remitted).toBe('0.00');
    await shot(page, '02-refused');
    // 10,00 by bank transfer (a comma is taken as the decimal point).
    await dialog.locator('#remit-amount').fill('10,00');
    await dialog.locator('#remit-method').selectOption('bank_transfer');
    await dialog.locator('#remit-reference').fill('Banco Unión 123');
    await dialog.getByRole('button', { name: 'Registrar' }).click();
    await expect.poll(() => page.locator('.toast').last().textContent()).toContain('Entrega registrada');
    const after = (await api(base, admin, 'GET', `/drivers/${driver.id}/cash?limit=1`)).body;
    expect(after).toMatchObject({ remitted: '10.00' });
    expect(after.data[0]).toMatchObject({
      entry_type: 'cash_remitted',
      amount: '-10.00',
      method: 'bank_transfer',
      reference: 'Banco Unión 123',
    });
    await expect.poll(() => row.locator('td').nth(1).textContent()).toBe(`${money(after.cash_in_hand)} ${after.currency}`);
    await expect.poll(() => rec.locator('td').nth(3).textContent()).toBe(money('10.00'));
    expect(await row.locator('.badge.alert').count()).toBe(0);

    // The workbook of the day, in the page's language.
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#cash-download').click()]);
    expect(download.suggestedFilename()).toMatch(/^cash-reconciliation_\d{4}-\d{2}-\d{2}_\d{4}-\d{2}-\d{2}\.xlsx$/);
    const file = readFileSync((await download.path())!);
    expect(file.subarray(0, 2).toString()).toBe('PK');

    expect(await axeSerious(page, 'cash view')).toEqual([]);

    // English.
    await page.locator('#lang').selectOption('en');
    await page.getByRole('link', { name: 'Cash' }).click();
    await page.getByRole('heading', { name: 'Cash in hand per driver' }).waitFor();
    await page.getByRole('heading', { name: "The day's reconciliation" }).waitFor();
    await row.waitFor();
    expect(await page.locator('#cash-in-hand th').nth(1).textContent()).toBe('Cash in hand');
    await shot(page, '03-en');

    // A phone: the same view, one column, buttons still large.
    await page.setViewportSize({ width: 390, height: 844 });
    await row.locator('button.remit').scrollIntoViewIfNeeded();
    expect((await row.locator('button.remit').boundingBox())!.height).toBeGreaterThanOrEqual(44);
    await shot(page, '04-phone');
    await context.close();
    expect(problems).toEqual([]);
  }, 240_000);
});
