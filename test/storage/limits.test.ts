import { unlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { png } from './fixtures.js';
import { loadConfig } from '../../src/config.js';
import { driversFromConfig } from '../../src/modules/storage/service/drivers.js';

/** Storage under several instances and limits. */
let t: TestApp;
let customer: Session;
const QUOTA = 20_000;

beforeAll(async () => {
  t = await createTestApp({ raw: { STORAGE_QUOTA_BYTES_PER_ORGANIZATION: String(QUOTA) } });
  customer = await t.as('customer');
});
afterAll(() => t?.close());

const openSlot = (size: number) =>
  t.req(customer, {
    method: 'POST',
    url: '/storage/generic/uploads',
    payload: { purpose: 'avatar', mime_type: 'image/png', filename: 'me.png', size_bytes: size },
  });
const slotCount = async () => Number((await t.db.withSystem((tx) => tx.query('SELECT count(*)::int AS n FROM storage_upload'))).rows[0].n);

describe('local storage', () => {
  it('answers 404 (not 500) when an object is recorded but its file is missing', async () => {
    const bytes = png(8);
    const other = await t.as('merchant');
    const slot = await t.req(other, {
      method: 'POST',
      url: '/storage/generic/uploads',
      payload: { purpose: 'avatar', mime_type: 'image/png', filename: 'a.png', size_bytes: bytes.length },
    });
    expect(slot.statusCode, slot.body).toBe(201);
    const { upload_id, upload_token, object_id } = slot.json();
    const put = await t.req(other, {
      method: 'PUT',
      url: `/storage/uploads/${upload_id}`,
      payload: bytes,
      headers: { 'content-type': 'image/png', 'x-upload-token': upload_token },
    });
    expect(put.statusCode, put.body).toBe(201);
    expect((await t.req(other, { method: 'GET', url: `/storage/objects/${object_id}` })).statusCode).toBe(200);
    // As on another instance whose disk never had the file.
    unlinkSync(path.join(t.config.dataDir, 'objects', object_id));
    const res = await t.req(other, { method: 'GET', url: `/storage/objects/${object_id}` });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'OBJECT_CONTENT_MISSING' });
  });

  it('refuses to start the local driver when the service is declared multi-instance; S3 is accepted', () => {
    const cfg = (raw: Record<string, string>) => loadConfig({ NODE_ENV: 'test', ...raw });
    expect(() => driversFromConfig(cfg({ MULTI_INSTANCE: 'true' }))).toThrow(/MULTI_INSTANCE=true use STORAGE_DRIVER=s3/);
    expect(() => driversFromConfig(cfg({ MULTI_INSTANCE: 'true', STORAGE_DRIVER: 'local' }))).toThrow(/STORAGE_DRIVER=local/);
    expect(driversFromConfig(cfg({ MULTI_INSTANCE: 'true', STORAGE_DRIVER: 's3', S3_BUCKET: 'b' })).primary.name).toBe('s3');
    expect(driversFromConfig(cfg({})).primary.name).toBe('local');
  });
});

describe('storage quota per organization', () => {
  it('refuses a slot that would pass the quota (objects + open slots) with 507 and the quota in the body; nothing is written', async () => {
    // Objects already stored by the organization count too.
    const stored = Number(
      (
        await t.db.withSystem((tx) =>
          tx.query('SELECT COALESCE(sum(size_bytes), 0)::int AS n FROM private_storage_object WHERE organization_id = $1', [
            t.demo.organizationId,
          ]),
        )
      ).rows[0].n,
    );
    const bytes = png(40);
    const slot = await openSlot(bytes.length);
    expect(slot.statusCode, slot.body).toBe(201);
    const { upload_id, upload_token } = slot.json();
    const put = await t.req(customer, {
      method: 'PUT',
      url: `/storage/uploads/${upload_id}`,
      payload: bytes,
      headers: { 'content-type': 'image/png', 'x-upload-token': upload_token },
    });
    expect(put.statusCode, put.body).toBe(201);

    const reserved = await openSlot(QUOTA - stored - bytes.length - 100);
    expect(reserved.statusCode, reserved.body).toBe(201);
    const before = await slotCount();
    const over = await openSlot(200);
    expect(over.statusCode).toBe(507);
    expect(over.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(over.json()).toMatchObject({
      status: 507,
      code: 'STORAGE_QUOTA_EXCEEDED',
      quota_bytes: QUOTA,
      used_bytes: QUOTA - 100,
      requested_bytes: 200,
    });
    expect(await slotCount()).toBe(before);
    expect((await openSlot(100)).statusCode).toBe(201); // exactly the room left
  });
});
