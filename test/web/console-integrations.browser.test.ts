import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, login } from '../hardening/server-process.js';
import { axeSerious, logIn, phoneFit, skipBrowser, startRig, type BrowserRig } from './browser.js';

/**
 * The console's integrations view (#/integrations) in a real browser (Debian's chromium through playwright-core) against the
 * real server on the embedded database with the demo seed: an API key created (shown once, copied, working), then revoked
 * after a confirmation (refused from then on); a spreadsheet tried first (its bad row named by row and column), refused
 * whole, then imported for its valid rows, listed with its report; a GPS app bound and revoked; a merchant's connected
 * shop listed and disconnected after a confirmation; Spanish and English; a 390 px phone. Screenshots go to test-artifacts/ (gitignored).
 */

const SKIP = skipBrowser('test/web/console-integrations.browser.test.ts');
const HEADER = 'external_ref,pickup_address,pickup_lat,pickup_lon,dropoff_address,dropoff_lat,dropoff_lon,recipient_name,recipient_phone';

describe.skipIf(SKIP)('console integrations view in chromium', () => {
  let rig: BrowserRig;

  beforeAll(async () => {
    rig = await startRig('console-integrations', { shots: 'console-integrations-' });
  }, 300_000);

  afterAll(async () => {
    await rig?.close();
  });

  it('creates an API key shown once and revokes it; tries a spreadsheet (a bad row named), imports its valid rows with the report; binds and revokes a GPS app; fits a phone', async () => {
    const base = rig.base;
    const admin = await login(base, 'admin@demo.test');
    const withKey = (key: string) => fetch(`${base}/api/v1/trips?limit=1`, { headers: { authorization: `Bearer ${key}` } });

    const context = await rig.browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'es-BO', acceptDownloads: true });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    const page = await context.newPage();
    rig.watch(page);
    await page.goto(`${base}/console`);
    await logIn(page, 'admin@demo.test');
    await page.getByRole('link', { name: 'Integraciones' }).click();
    await page.getByRole('heading', { name: 'Claves de API' }).waitFor();

    // A key: named, two scopes, shown once with a copy button; it works as a bearer token.
    await page.locator('#key-name').fill('Tienda web');
    await page.getByLabel('Ver viajes').check();
    await page.getByLabel('Eventos en vivo').check();
    await page.locator('#key-create').click();
    const shown = page.locator('#key-once-value');
    await shown.waitFor();
    const key = await shown.inputValue();
    expect(key).toMatch(/^dlk_[0-9a-f-]{36}_[A-Za-z0-9_-]{43}$/);
    await page.locator('#key-once-copy').click();
    await expect.poll(() => page.locator('#key-once-copy').textContent()).toBe('Copiada');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    expect((await withKey(key)).status).toBe(200);
    const id = key.slice(4, 40);
    const row = page.locator(`#keys-list tr[data-key="${id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain('Ver viajes');
    await rig.shot(page, '01-key-once');
    // Once dismissed (or the view redrawn) the key is nowhere on the page: only its hint.
    await page.locator('#key-once-done').click();
    await page.goto(`${base}/console#/integrations`);
    await row.waitFor();
    expect(await page.content()).not.toContain(key.slice(-20));

    // Revoked after a confirmation (dismissing it changes nothing); refused from then on.
    page.once('dialog', (d) => void d.dismiss());
    await row.locator('button.revoke').click();
    expect((await withKey(key)).status).toBe(200);
    page.once('dialog', (d) => {
      expect(d.message()).toContain('Tienda web');
      void d.accept();
    });
    await row.locator('button.revoke').click();
    await expect.poll(() => row.getAttribute('class')).toBe('revoked');
    expect(await row.textContent()).toContain('Revocada');
    expect((await withKey(key)).status).toBe(401);

    // A spreadsheet with a phone that is not a phone on row 3: the try names it, creates nothing.
    const ref = `WEB-${Date.now().toString(36)}`;
    const csv = [
      HEADER,
      `${ref}-1,Av. 16 de Julio 1490,-16.4990,-68.1335,Calle Jaén 711,-16.4955,-68.1371,Ana Mamani,+59171234567`,
      `${ref}-2,Av. Arce 2000,-16.5080,-68.1260,Calle 21 Calacoto,-16.5400,-68.0800,Luis Quispe,no-es-telefono`,
    ].join('\r\n');
    await page.locator('#imp-file').setInputFiles({ name: 'viajes.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.locator('#imp-dry').click();
    const bad = page.locator('#imp-errors tr[data-row="3"]');
    await bad.waitFor();
    expect(await bad.textContent()).toContain('recipient_phone');
    expect(await bad.textContent()).toContain('INVALID_PHONE');
    expect(await bad.textContent()).toContain('No es un número de teléfono válido');
    expect(await page.locator('#imp-result').textContent()).toContain('Prueba: 1 filas válidas');
    /** Trips the imports of this file created (the server's own count). */
    const mine = async () =>
      ((await api(base, admin, 'GET', '/imports?limit=100')).body.data as { dry_run: boolean; file_name: string; created_rows: number }[])
        .filter((i) => !i.dry_run && i.file_name === 'viajes.csv')
        .reduce((n, i) => n + i.created_rows, 0);
    expect(await mine()).toBe(0);
    await rig.shot(page, '02-dry-run-error');
    // All or nothing (the default): refused whole, explained in Spanish.
    expect(await page.locator('#imp-run').isEnabled()).toBe(true);
    await page.locator('#imp-run').click();
    await expect.poll(() => page.locator('#imp-result .error').textContent()).toContain('no se importó nada');
    expect(await mine()).toBe(0);
    // The valid rows only: one trip created, the bad row reported.
    await page.locator('#imp-mode').selectOption('valid_only');
    await page.locator('#imp-run').click();
    await expect.poll(() => page.locator('#imp-result').textContent()).toContain('Importación: 1 creadas');
    expect(await mine()).toBe(1);
    // The list shows the import (newest first) beside the try; the refused all-or-nothing attempt left nothing.
    const last = page.locator('#imp-past tbody tr').first();
    await expect.poll(() => page.locator('#imp-past tbody tr').count()).toBe(2);
    expect(await last.textContent()).toContain('Terminada');
    expect(await last.textContent()).not.toContain('prueba');
    await rig.shot(page, '03-imported');
    const [report] = await Promise.all([page.waitForEvent('download'), last.locator('button.report').click()]);
    const text = readFileSync((await report.path())!, 'utf8');
    expect(text).toContain('INVALID_PHONE');
    expect(text).toContain(`${ref}-1,created`);
    const [template] = await Promise.all([page.waitForEvent('download'), page.locator('#imp-template-xlsx').click()]);
    expect(template.suggestedFilename()).toBe('trips-template.xlsx');

    // A GPS app bound to the first driver: its server URL shown once; then revoked.
    await page.locator('#gps-identifier').fill(`tel-${Date.now().toString(36)}`);
    await page.locator('#gps-bind').click();
    const url = await page.locator('#gps-once-value').inputValue();
    expect(url).toMatch(new RegExp(`^${base}/api/v1/gps/osmand/gpd_`));
    const fix = await fetch(`${url}?id=nobody&lat=-16.5&lon=-68.1`);
    expect(fix.status).toBe(404);
    const device = page.locator('#gps-list tbody tr').first();
    await device.waitFor();
    page.once('dialog', (d) => void d.accept());
    await device.locator('button.revoke').click();
    await expect.poll(() => device.getAttribute('class')).toBe('revoked');
    expect((await fetch(`${url}?id=nobody&lat=-16.5&lon=-68.1`)).status).toBe(401);

    expect(await axeSerious(page, 'integrations view')).toEqual([]);

    // English.
    await page.locator('#lang').selectOption('en');
    await page.getByRole('link', { name: 'Integrations' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByRole('heading', { name: 'Import from a spreadsheet' }).waitFor();
    await expect.poll(() => page.locator('#imp-past tbody tr').first().textContent()).toContain('Completed');
    await rig.shot(page, '04-en');

    // A phone: nothing wider than the screen, every control a thumb can hit.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.locator('#key-name').fill('Phone key');
    await page.getByLabel('Read trips').check();
    await page.locator('#key-create').click();
    await page.locator('#key-once-value').waitFor();
    const found = await phoneFit(page, 390);
    expect(found.wide, 'overflow').toEqual([]);
    expect(found.small, 'small touch targets').toEqual([]);
    await rig.shot(page, '05-phone', { fullPage: true });
    await context.close();
    expect(rig.problems).toEqual([]);
  }, 300_000);

  it("lists a merchant's connected shop and disconnects it after a confirmation (dismissing it keeps it); fits a phone", async () => {
    const base = rig.base;
    const admin = await login(base, 'admin@demo.test');
    const merchant = await login(base, 'merchant@demo.test');
    const shopUrl = `tienda-${Date.now().toString(36)}.myshopify.com`;
    const made = await api(base, merchant, 'POST', '/shops/connections', {
      platform: 'shopify',
      shop_url: shopUrl,
      secret: 'secreto-de-prueba',
    });
    expect(made.status).toBe(201);
    const connection = made.body as { id: string; merchant_id: string };
    const listed = async () =>
      ((await api(base, admin, 'GET', '/shops/connections?limit=100')).body.data as { id: string }[]).map((c) => c.id);
    expect(await listed()).toEqual([connection.id]);

    const context = await rig.browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'es-BO' });
    const page = await context.newPage();
    rig.watch(page);
    await page.goto(`${base}/console`);
    await logIn(page, 'admin@demo.test');
    await page.getByRole('link', { name: 'Integraciones' }).click();
    await page.getByRole('heading', { name: 'Tiendas conectadas' }).waitFor();
    const row = page.locator(`#shops-list tr[data-connection="${connection.id}"]`);
    await row.waitFor();
    const text = await row.textContent();
    // The merchant by name, as the organization knows him.
    const shopOwner = (await api(base, admin, 'GET', '/merchants')).body.data.find((m: { id: string }) => m.id === connection.merchant_id);
    expect(text).toContain(shopOwner.name);
    expect(text).toContain('Shopify');
    expect(text).toContain(shopUrl);
    await row.scrollIntoViewIfNeeded();
    await rig.shot(page, '06-shops');

    // Dismissing the confirmation keeps the shop, here and on the server.
    page.once('dialog', (d) => {
      expect(d.message()).toContain(shopUrl);
      void d.dismiss();
    });
    await row.locator('button.disconnect').click();
    await page.reload();
    await row.waitFor();
    expect(await listed()).toEqual([connection.id]);

    // A phone: the shop as a card, nothing wider than the screen, the button a thumb can hit.
    await page.setViewportSize({ width: 390, height: 844 });
    const found = await phoneFit(page, 390);
    expect(found.wide, 'overflow').toEqual([]);
    expect(found.small, 'small touch targets').toEqual([]);
    await row.scrollIntoViewIfNeeded();
    await rig.shot(page, '07-shops-phone');

    // Accepted: gone from the page and from the server's list; the empty state says so.
    page.once('dialog', (d) => void d.accept());
    await row.locator('button.disconnect').click();
    await expect.poll(() => page.locator('#shops-list').textContent()).toBe('Ningún comercio conectó una tienda.');
    expect(await row.count()).toBe(0);
    expect(await listed()).toEqual([]);

    await page.locator('#lang').selectOption('en');
    await page.getByRole('link', { name: 'Integrations' }).click();
    await page.getByRole('heading', { name: 'Connected shops' }).waitFor();
    await expect.poll(() => page.locator('#shops-list').textContent()).toBe('No merchant has connected a shop.');
    await context.close();
    expect(rig.problems).toEqual([]);
  }, 300_000);
});
