import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newShop, ok, rows, type Shop } from '../commerce/fixtures.js';
import { newId } from '../../src/platform/ids.js';

const CSV = 'text/csv';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const TRIP_HEADER =
  'external_ref,pickup_address,pickup_lat,pickup_lon,dropoff_address,dropoff_lat,dropoff_lon,recipient_name,recipient_phone,delivery_fee';

let t: TestApp;
let admin: Session;
let shop: Shop;

beforeAll(async () => {
  // Small files go to the background here, so that its chunks are seen without importing hundreds of trips.
  t = await createTestApp({ raw: { IMPORT_INLINE_ROWS: '8', IMPORT_CHUNK_ROWS: '5' } });
  admin = await t.as('admin');
  shop = await newShop(t);
});
afterAll(() => t?.close());

const tripLine = (ref: string, phone = '+59171234567') =>
  `${ref},"Av. 16 de Julio 1490, La Paz",-16.4990,-68.1335,Calle Jaén 711,-16.4955,-68.1371,Ana Mamani,${phone},12.50`;
const csv = (...lines: string[]) => lines.join('\r\n') + '\r\n';
const uniq = () => newId().slice(-10);

function upload(s: Session, path: string, body: string | Buffer, query = '', type = CSV) {
  return t.req(s, { method: 'POST', url: `/imports/${path}${query ? `?${query}` : ''}`, payload: body, headers: { 'content-type': type } });
}

const count = async (sql: string, params: unknown[] = []) => Number((await rows<{ n: number }>(t, sql, params))[0].n);
const tripsOf = (organizationId: string) => count('SELECT count(*)::int AS n FROM trip WHERE organization_id = $1', [organizationId]);
const importsOf = (organizationId: string) =>
  count('SELECT count(*)::int AS n FROM import_job WHERE organization_id = $1', [organizationId]);

async function xlsx(header: string[], data: (string | number)[][]): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('data');
  ws.addRow(header);
  for (const r of data) ws.addRow(r);
  return Buffer.from(await wb.xlsx.writeBuffer());
}

/** A report (CSV) as objects by header. */
function parseReport(body: string): Record<string, string>[] {
  const [head, ...lines] = body
    .replace(/^\ufeff/, '')
    .trim()
    .split('\r\n');
  const cols = head.split(',');
  return lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [cols[i], v])));
}

describe('templates', () => {
  it('CSV and XLSX templates carry the documented columns and one example row', async () => {
    const res = await t.req(admin, { method: 'GET', url: '/imports/trips/template' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toContain('text/csv');
    expect(res.headers['content-disposition']).toContain('trips-template.csv');
    const [head, example] = res.body
      .replace(/^\ufeff/, '')
      .trim()
      .split('\r\n');
    expect(head.split(',').slice(0, 3)).toEqual(['external_ref', 'merchant_id', 'pickup_address']);
    expect(example).toContain('PED-1001');

    const demoMerchant = await t.as('merchant');
    const x = await t.req(demoMerchant, { method: 'GET', url: '/imports/express-requests/template?format=xlsx' });
    expect(x.statusCode).toBe(200);
    expect(x.headers['content-type']).toBe(XLSX);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(x.rawPayload as unknown as ArrayBuffer);
    expect(wb.worksheets[0].getRow(1).getCell(1).value).toBe('external_ref');
    expect(wb.worksheets[0].getRow(2).getCell(1).value).toBe('EXP-2001');
    // The template imports as it is (a dry run: nothing is created; the pickup is the merchant's location).
    const dry = ok(await upload(demoMerchant, 'express-requests', x.rawPayload, '', XLSX), 201);
    expect(dry).toMatchObject({ dry_run: true, status: 'completed', total_rows: 1, valid_rows: 1, error_rows: 0 });
  });

  it('an unknown format is 400', async () => {
    expect((await t.req(admin, { method: 'GET', url: '/imports/trips/template?format=ods' })).statusCode).toBe(400);
  });
});

describe('trip imports', () => {
  it('a dry run (the default) reports and creates nothing; the import then creates every row, once', async () => {
    const [a, b] = [`A-${uniq()}`, `B-${uniq()}`];
    const file = csv(TRIP_HEADER, tripLine(a), tripLine(b, '71234567'));
    const before = await tripsOf(admin.organizationId);
    const dry = ok(await upload(admin, 'trips', file), 201);
    expect(dry).toMatchObject({
      kind: 'trips',
      dry_run: true,
      mode: 'all_or_nothing',
      status: 'completed',
      total_rows: 2,
      processed_rows: 2,
    });
    expect(dry).toMatchObject({ valid_rows: 2, created_rows: 0, errors: [] });
    expect(await tripsOf(admin.organizationId)).toBe(before);

    const done = ok(await upload(admin, 'trips', file, 'dry_run=false&file_name=lote.csv'), 201);
    expect(done).toMatchObject({ dry_run: false, status: 'completed', created_rows: 2, file_name: 'lote.csv' });
    expect(await tripsOf(admin.organizationId)).toBe(before + 2);

    const report = await t.req(admin, { method: 'GET', url: done.report_path.replace('/api/v1', '') });
    expect(report.statusCode).toBe(200);
    const lines = parseReport(report.body);
    expect(lines.map((l) => [l.row, l.external_ref, l.status])).toEqual([
      ['2', a, 'created'],
      ['3', b, 'created'],
    ]);
    const trip = ok(await t.req(admin, { method: 'GET', url: `/trips/${lines[0].entity_id}` }));
    expect(trip).toMatchObject({
      pickup_address: 'Av. 16 de Julio 1490, La Paz',
      dropoff_address: 'Calle Jaén 711',
      delivery_fee: '12.50',
    });

    // Again: every row is a duplicate with the trip it created, nothing new.
    const again = ok(await upload(admin, 'trips', file, 'dry_run=false'), 201);
    expect(again).toMatchObject({ created_rows: 0, duplicate_rows: 2 });
    const dupes = parseReport((await t.req(admin, { method: 'GET', url: `/imports/${again.id}/report` })).body);
    expect(dupes.map((l) => [l.status, l.entity_id])).toEqual(lines.map((l) => ['duplicate', l.entity_id]));
    expect(await tripsOf(admin.organizationId)).toBe(before + 2);

    const audit = await rows(t, "SELECT action FROM audit_log WHERE entity_type = 'import' AND entity_id = $1", [done.id]);
    expect(audit.map((r) => r.action)).toEqual(['import.completed']);
  });

  it('a wrong column is 422 naming it, and nothing is written', async () => {
    const [trips, imports] = [await tripsOf(admin.organizationId), await importsOf(admin.organizationId)];
    const res = await upload(
      admin,
      'trips',
      csv(TRIP_HEADER.replace('recipient_phone', 'telefono'), tripLine(`W-${uniq()}`)),
      'dry_run=false',
    );
    expect(res.statusCode).toBe(422);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ code: 'IMPORT_UNKNOWN_COLUMN', errors: [{ field: 'telefono' }] });
    const missing = await upload(admin, 'trips', csv('external_ref,pickup_address', `X-${uniq()},Somewhere`));
    expect(missing.statusCode).toBe(422);
    expect(missing.json().code).toBe('IMPORT_MISSING_COLUMN');
    expect(missing.json().detail).toContain('dropoff_address');
    expect([await tripsOf(admin.organizationId), await importsOf(admin.organizationId)]).toEqual([trips, imports]);
  });

  it('a row with a phone that is not a phone is named by row and column; nothing is written unless valid_only, which imports the rest', async () => {
    const [good, bad] = [`G-${uniq()}`, `P-${uniq()}`];
    const file = csv(TRIP_HEADER, tripLine(good), tripLine(bad, '12'));
    const [trips, imports] = [await tripsOf(admin.organizationId), await importsOf(admin.organizationId)];
    const res = await upload(admin, 'trips', file, 'dry_run=false');
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      code: 'IMPORT_INVALID_ROWS',
      row_errors: [{ row: 3, column: 'recipient_phone', code: 'INVALID_PHONE' }],
      errors: [{ field: 'row 3 recipient_phone' }],
    });
    expect([await tripsOf(admin.organizationId), await importsOf(admin.organizationId)]).toEqual([trips, imports]);

    // The dry run reports the same without failing.
    const dry = ok(await upload(admin, 'trips', file), 201);
    expect(dry).toMatchObject({ valid_rows: 1, error_rows: 1, errors: [{ row: 3, column: 'recipient_phone', code: 'INVALID_PHONE' }] });

    const partial = ok(await upload(admin, 'trips', file, 'dry_run=false&mode=valid_only'), 201);
    expect(partial).toMatchObject({ mode: 'valid_only', created_rows: 1, error_rows: 1, status: 'completed' });
    expect(await tripsOf(admin.organizationId)).toBe(trips + 1);
    const report = parseReport((await t.req(admin, { method: 'GET', url: `/imports/${partial.id}/report` })).body);
    expect(report.map((l) => [l.row, l.status, l.error_column, l.error_code])).toEqual([
      ['2', 'created', '', ''],
      ['3', 'error', 'recipient_phone', 'INVALID_PHONE'],
    ]);
  });

  it("a row failing the trip's own rules fails an all-or-nothing import whole, and only itself with valid_only", async () => {
    const header = `${TRIP_HEADER},merchant_id`;
    const file = csv(header, `${tripLine(`M-${uniq()}`)},${shop.merchantId}`, `${tripLine(`N-${uniq()}`)},${newId()}`);
    const trips = await tripsOf(admin.organizationId);
    const res = await upload(admin, 'trips', file, 'dry_run=false');
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().row_errors).toEqual([expect.objectContaining({ row: 3, column: 'merchant_id', code: 'MERCHANT_NOT_FOUND' })]);
    expect(await tripsOf(admin.organizationId)).toBe(trips);
    const partial = ok(await upload(admin, 'trips', file, 'dry_run=false&mode=valid_only'), 201);
    expect(partial).toMatchObject({ created_rows: 1, error_rows: 1 });
    expect(await tripsOf(admin.organizationId)).toBe(trips + 1);
  });

  it('two concurrent imports of the same refs create each row once', async () => {
    const refs = Array.from({ length: 4 }, () => `C-${uniq()}`);
    const file = csv(TRIP_HEADER, ...refs.map((r) => tripLine(r)));
    const trips = await tripsOf(admin.organizationId);
    const dispatch = await t.as('dispatch');
    const [x, y] = await Promise.all([
      upload(admin, 'trips', file, 'dry_run=false&mode=valid_only'),
      upload(dispatch, 'trips', file, 'dry_run=false&mode=valid_only'),
    ]);
    const [bx, by] = [ok(x, 201), ok(y, 201)];
    expect(bx.created_rows + by.created_rows).toBe(4);
    expect(bx.duplicate_rows + by.duplicate_rows).toBe(4);
    expect(await tripsOf(admin.organizationId)).toBe(trips + 4);
  });

  it('an XLSX file imports like a CSV one; numbers and phones typed as numbers are read as text', async () => {
    const ref = `X-${uniq()}`;
    const file = await xlsx(TRIP_HEADER.split(','), [
      [ref, 'Av. Arce 2500', -16.51, -68.12, 'Calle 21', -16.52, -68.11, 'Luis', 71234567, 10],
    ]);
    const res = ok(await upload(admin, 'trips', file, 'dry_run=false', XLSX), 201);
    expect(res).toMatchObject({ format: 'xlsx', created_rows: 1, error_rows: 0 });
    const report = await t.req(admin, { method: 'GET', url: `/imports/${res.id}/report?format=xlsx` });
    expect(report.headers['content-type']).toBe(XLSX);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(report.rawPayload as unknown as ArrayBuffer);
    const row = wb.worksheets[0].getRow(2);
    expect([row.getCell(1).value, row.getCell(2).value, row.getCell(3).value]).toEqual([2, ref, 'created']);
  });

  it('refuses what is not a spreadsheet, and limits rows', async () => {
    expect((await upload(admin, 'trips', 'hello', '', 'text/plain')).statusCode).toBe(415);
    expect((await upload(admin, 'trips', Buffer.from('PK\u0003\u0004junk'), '', CSV)).statusCode).toBe(415);
    const broken = await upload(admin, 'trips', Buffer.from('PK\u0003\u0004junk'), '', XLSX);
    expect([broken.statusCode, broken.json().code]).toEqual([422, 'IMPORT_UNREADABLE']);
    const many = csv(TRIP_HEADER, ...Array.from({ length: 5001 }, (_, i) => tripLine(`L-${i}`)));
    const res = await upload(admin, 'trips', many);
    expect([res.statusCode, res.json().code]).toEqual([413, 'IMPORT_TOO_MANY_ROWS']);
    expect((await upload(admin, 'trips', csv(TRIP_HEADER))).json().code).toBe('IMPORT_EMPTY');
  });

  it('merchants, customers and drivers may not import trips', async () => {
    for (const role of ['merchant', 'customer', 'driver'] as const)
      expect((await upload(await t.as(role), 'trips', csv(TRIP_HEADER, tripLine('R-1')))).statusCode).toBe(403);
  });
});

describe('express request imports', () => {
  const HEADER = 'external_ref,customer_name,customer_phone,dropoff_address,dropoff_lat,dropoff_lon,branch_id,declared_value';
  const line = (ref: string) => `${ref},Ana,71234567,Calle Jaén 711,-16.4955,-68.1371,${shop.branchId},150`;

  it('a merchant imports his own; staff import for a merchant they name; a merchant cannot import for another', async () => {
    const mine = ok(await upload(shop.merchant, 'express-requests', csv(HEADER, line(`E-${uniq()}`)), 'dry_run=false'), 201);
    expect(mine).toMatchObject({ kind: 'express_requests', merchant_id: shop.merchantId, created_rows: 1 });
    const id = parseReport((await t.req(shop.merchant, { method: 'GET', url: `/imports/${mine.id}/report` })).body)[0].entity_id;
    const list = ok(await t.req(shop.merchant, { method: 'GET', url: '/merchant/delivery-express' }));
    expect(list.data.find((e: { id: string }) => e.id === id)).toMatchObject({
      customer_phone: '+59171234567',
      trip_id: expect.any(String),
    });

    const demoMerchant = await t.as('merchant');
    const refused = await upload(demoMerchant, 'express-requests', csv(HEADER, line(`F-${uniq()}`)), `merchant_id=${shop.merchantId}`);
    expect(refused.statusCode).toBe(403);
    // Not the demo merchant's branch: an error of the row, named by its column... or of the row as a whole.
    const staff = ok(
      await upload(admin, 'express-requests', csv(HEADER, line(`S-${uniq()}`)), `dry_run=false&merchant_id=${shop.merchantId}`),
      201,
    );
    expect(staff).toMatchObject({ merchant_id: shop.merchantId, created_rows: 1 });
    const noMerchant = await upload(admin, 'express-requests', csv(HEADER, line(`S-${uniq()}`)));
    expect([noMerchant.statusCode, noMerchant.json().code]).toEqual([422, 'MERCHANT_REQUIRED']);

    // The merchant sees his imports (also the one staff made for him), not the organization's trip imports.
    const mineList = ok(await t.req(shop.merchant, { method: 'GET', url: '/imports' }));
    expect(mineList.data.map((j: { id: string }) => j.id)).toEqual(expect.arrayContaining([mine.id, staff.id]));
    expect(mineList.data.every((j: { merchant_id: string }) => j.merchant_id === shop.merchantId)).toBe(true);
    expect((await t.req(demoMerchant, { method: 'GET', url: `/imports/${mine.id}` })).statusCode).toBe(404);
  });
});

describe('isolation and progress', () => {
  it("another organization's import is 404, and its list does not show ours", async () => {
    const done = ok(await upload(admin, 'trips', csv(TRIP_HEADER, tripLine(`I-${uniq()}`))), 201);
    const other = await t.newOrganization('Imports B');
    const otherAdmin = await t.login(other.logins.admin);
    expect((await t.req(otherAdmin, { method: 'GET', url: `/imports/${done.id}` })).statusCode).toBe(404);
    expect((await t.req(otherAdmin, { method: 'GET', url: `/imports/${done.id}/report` })).statusCode).toBe(404);
    expect(ok(await t.req(otherAdmin, { method: 'GET', url: '/imports' })).data).toEqual([]);
    const mine = ok(await t.req(admin, { method: 'GET', url: '/imports?limit=2' }));
    expect(mine.data).toHaveLength(2);
    expect(mine.next_cursor).toEqual(expect.any(String));
  });

  it('a large file is queued (202) and processed in the background, chunk by chunk, with its progress', async () => {
    const refs = Array.from({ length: 12 }, (_, i) => `Q${i}-${uniq()}`);
    const file = csv(TRIP_HEADER, ...refs.map((r, i) => tripLine(r, i === 7 ? 'not-a-phone' : '+59171234567')));
    const res = await upload(admin, 'trips', file, 'dry_run=false&mode=valid_only');
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({ status: 'queued', total_rows: 12, processed_rows: 1, error_rows: 1 });
    const worker = t.app.ctx.workers.find((w) => w.name === 'imports')!;
    const trips = await tripsOf(admin.organizationId);
    expect(await worker.tick()).toBe(5);
    const mid = ok(await t.req(admin, { method: 'GET', url: `/imports/${res.json().id}` }));
    expect(mid).toMatchObject({ status: 'running', processed_rows: 6, created_rows: 5 });
    expect(await tripsOf(admin.organizationId)).toBe(trips + 5);
    expect(await worker.tick()).toBe(5);
    expect(await worker.tick()).toBe(1);
    const done = ok(await t.req(admin, { method: 'GET', url: `/imports/${res.json().id}` }));
    expect(done).toMatchObject({ status: 'completed', processed_rows: 12, created_rows: 11, error_rows: 1 });
    expect(done.finished_at).toEqual(expect.any(String));
    expect(await tripsOf(admin.organizationId)).toBe(trips + 11);
    expect(await worker.tick()).toBe(0);
  });

  it('a large all-or-nothing import runs as one step: a row failing its rules undoes every row', async () => {
    const header = `${TRIP_HEADER},merchant_id`;
    const lines = Array.from({ length: 10 }, (_, i) => `${tripLine(`O${i}-${uniq()}`)},${i === 9 ? newId() : ''}`);
    const res = await upload(admin, 'trips', csv(header, ...lines), 'dry_run=false');
    expect(res.statusCode, res.body).toBe(202);
    const trips = await tripsOf(admin.organizationId);
    const worker = t.app.ctx.workers.find((w) => w.name === 'imports')!;
    expect(await worker.tick()).toBe(10);
    const done = ok(await t.req(admin, { method: 'GET', url: `/imports/${res.json().id}` }));
    expect(done).toMatchObject({ status: 'failed', created_rows: 0, error_rows: 1, errors: [{ row: 11, column: 'merchant_id' }] });
    expect(await tripsOf(admin.organizationId)).toBe(trips);
    const report = parseReport((await t.req(admin, { method: 'GET', url: `/imports/${res.json().id}/report` })).body);
    expect(report.filter((l) => l.status === 'skipped')).toHaveLength(9);
  });
});
