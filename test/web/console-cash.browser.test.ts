import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, login } from '../hardening/server-process.js';
import { axeSerious, logIn, skipBrowser, startRig, type BrowserRig } from './browser.js';

/**
 * The console's cash view (#/cash) in a real browser (Debian's chromium through playwright-core) against the real server on the
 * embedded database with the demo seed: the cash each driver holds against his limit, the day's reconciliation, recording a
 * hand-in (a refused amount explained in the page's language, then a good one), the workbook download, Spanish and English.
 * Screenshots go to test-artifacts/ (gitignored).
 */

const SKIP = skipBrowser('test/web/console-cash.browser.test.ts');

describe.skipIf(SKIP)('console cash view in chromium', () => {
  let rig: BrowserRig;

  beforeAll(async () => {
    rig = await startRig('console-cash', { shots: 'console-cash-' });
  }, 300_000);

  afterAll(async () => {
    await rig?.close();
  });

  it("shows cash in hand against the limit and the day's reconciliation, records a hand-in (a refused one explained), downloads the workbook; Spanish and English", async () => {
    const base = rig.base;
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

    const context = await rig.browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'es-BO', acceptDownloads: true });
    const page = await context.newPage();
    rig.watch(page);
    await page.goto(`${base}/console`);
    await logIn(page, 'admin@demo.test');
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
    await rig.shot(page, '01-es');

    // A hand-in larger than the cash in hand: refused, explained in Spanish, nothing recorded.
    await row.locator('button.remit').click();
    const dialog = page.locator('#remit-dialog');
    await dialog.locator('#remit-amount').fill(String(Number(before.cash_in_hand) + 10));
    await dialog.getByRole('button', { name: 'Registrar' }).click();
    await expect.poll(() => dialog.locator('#remit-error').textContent()).toContain('supera el efectivo en mano');
    expect((await api(base, admin, 'GET', `/drivers/${driver.id}/cash`)).body.remitted).toBe('0.00');
    await rig.shot(page, '02-refused');
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
    await rig.shot(page, '03-en');

    // A phone: the same view, one column, buttons still large.
    await page.setViewportSize({ width: 390, height: 844 });
    await row.locator('button.remit').scrollIntoViewIfNeeded();
    expect((await row.locator('button.remit').boundingBox())!.height).toBeGreaterThanOrEqual(44);
    await rig.shot(page, '04-phone');
    await context.close();
    expect(rig.problems).toEqual([]);
  }, 240_000);
});
