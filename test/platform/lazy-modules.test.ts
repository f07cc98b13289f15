import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers.js';
import { lazyModulesLoaded } from '../../src/platform/lazy.js';
import { createS3Driver } from '../../src/modules/storage/service/drivers.js';
import { XLSX_TYPE } from '../../src/platform/workbook.js';
import { newSubadmin, newTerritory } from '../subadmin/fixtures.js';

// The heavy optional modules (exceljs, @aws-sdk/client-s3) are imported on first use (src/platform/lazy.ts):
// building the app and serving requests that do not need them leaves them unloaded.
// Both are CommonJS packages: once imported (from ESM too) their files are in require.cache, which
// tells whether anything in the app graph imports them eagerly (each test file runs in its own process).
const cache = createRequire(import.meta.url).cache;
const inCache = (pkg: string) => Object.keys(cache).some((k) => k.includes(`/node_modules/${pkg}/`));

let t: TestApp;
let server: Server;

beforeAll(async () => {
  t = await createTestApp();
  server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.end(`object at ${req.url?.split('?')[0]}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
}, 60_000);
afterAll(async () => {
  server?.close();
  await t?.close();
});

describe('lazy optional modules', () => {
  it('the app starts and answers without exceljs or the S3 SDK; the first report loads exceljs, the first S3 request the SDK', async () => {
    const health = await t.app.inject({ method: 'GET', url: '/api/v1/health' });
    expect(health.statusCode, health.body).toBe(200);
    const admin = await t.as('admin');
    const territory = await newTerritory(t, admin, 'Lazy zone', -67, -16);
    const sub = await newSubadmin(t, admin, { territory_ids: [territory] });
    expect(lazyModulesLoaded()).toEqual([]);
    expect(inCache('exceljs')).toBe(false);
    expect(inCache('@aws-sdk/client-s3')).toBe(false);

    const report = await t.req(sub.session, { method: 'GET', url: '/subadmin/reports/deliveries.xls' });
    expect(report.statusCode, report.body).toBe(200);
    expect(report.headers['content-type']).toBe(XLSX_TYPE);
    expect(report.rawPayload.subarray(0, 2).toString()).toBe('PK'); // a zip container: the xlsx was built
    expect(lazyModulesLoaded()).toEqual(['exceljs']);
    expect(inCache('exceljs')).toBe(true);

    const driver = createS3Driver({
      bucket: 'b',
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      forcePathStyle: true,
      accessKeyId: 'AKIDTEST',
      secretAccessKey: 'secret-test',
      keyPrefix: 'objects/',
    });
    expect(lazyModulesLoaded()).toEqual(['exceljs']); // creating the driver does not load the SDK
    expect(await text(await driver.get('01a21074-7dc4-7c0e-ac81-28fe36c6e63f'))).toBe(
      'object at /b/objects/01a21074-7dc4-7c0e-ac81-28fe36c6e63f',
    );
    expect(lazyModulesLoaded()).toEqual(['@aws-sdk/client-s3', 'exceljs']);
    expect(inCache('@aws-sdk/client-s3')).toBe(true);
  });
});
