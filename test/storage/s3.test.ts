import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Driver } from '../../src/modules/storage/service/drivers.js';
import { UploadVerifier } from '../../src/modules/storage/service/verify.js';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { peExecutable, png, sha256 } from './fixtures.js';

/** A tiny S3-compatible endpoint on localhost that records requests (no network, no real S3). */
interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  complete: boolean;
}
const store = new Map<string, Buffer>();
const requests: Recorded[] = [];
let server: Server;
let endpoint: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    const rec: Recorded = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.alloc(0), complete: false };
    requests.push(rec);
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      rec.body = Buffer.concat(chunks);
      rec.complete = true;
      const key = req.url!.split('?')[0];
      if (req.method === 'PUT') {
        if (rec.body.length !== Number(req.headers['content-length'])) {
          res.writeHead(400).end();
          return;
        }
        store.set(key, rec.body);
        res.writeHead(200, { etag: `"${sha256(rec.body).slice(0, 32)}"` }).end();
      } else if (req.method === 'GET') {
        const obj = store.get(key);
        if (!obj) {
          res.writeHead(404, { 'content-type': 'application/xml' }).end('<Error><Code>NoSuchKey</Code><Message>none</Message></Error>');
          return;
        }
        const m = /^bytes=(\d+)-(\d+)$/.exec(String(req.headers.range ?? ''));
        if (m) {
          const [s, e] = [Number(m[1]), Math.min(Number(m[2]), obj.length - 1)];
          res.writeHead(206, { 'content-length': e - s + 1, 'content-range': `bytes ${s}-${e}/${obj.length}` }).end(obj.subarray(s, e + 1));
        } else {
          res.writeHead(200, { 'content-length': obj.length }).end(obj);
        }
      } else if (req.method === 'DELETE') {
        store.delete(key);
        res.writeHead(204).end();
      } else {
        res.writeHead(405).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const settings = () => ({
  bucket: 'evidence',
  region: 'us-east-1',
  endpoint,
  forcePathStyle: true,
  accessKeyId: 'AKIDTEST',
  secretAccessKey: 'secret-test',
  keyPrefix: 'objects/',
});

describe('S3 driver request path', () => {
  it('PutObject: signed path-style PUT with Content-Length and Content-Type; GetObject whole and by Range; DeleteObject', async () => {
    const driver = createS3Driver(settings());
    const bytes = png(16);
    requests.length = 0;
    await driver.put('obj-1', Readable.from([bytes.subarray(0, 100), bytes.subarray(100)]), bytes.length, 'image/png');
    const put = requests.find((r) => r.method === 'PUT')!;
    expect(put.url.split('?')[0]).toBe('/evidence/objects/obj-1');
    expect(put.headers['content-length']).toBe(String(bytes.length));
    expect(put.headers['content-type']).toBe('image/png');
    expect(String(put.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDTEST\/\d{8}\/us-east-1\/s3\/aws4_request/);
    expect(put.body.equals(bytes)).toBe(true);

    const whole = Buffer.concat(await (await driver.get('obj-1')).toArray());
    expect(whole.equals(bytes)).toBe(true);
    const part = Buffer.concat(await (await driver.get('obj-1', { start: 10, end: 19 })).toArray());
    expect(part.equals(bytes.subarray(10, 20))).toBe(true);
    expect(requests.filter((r) => r.method === 'GET').map((r) => r.headers.range)).toEqual([undefined, 'bytes=10-19']);

    await driver.delete('obj-1');
    expect(store.has('/evidence/objects/obj-1')).toBe(false);
  });

  it('a body refused mid-stream aborts the PUT, leaves nothing stored and reports the refusal', async () => {
    const driver = createS3Driver(settings());
    const bad = Buffer.concat([peExecutable(), Buffer.alloc(20_000)]);
    const verifier = new UploadVerifier(bad.length, 'image/jpeg');
    Readable.from([bad.subarray(0, 8192), bad.subarray(8192)]).pipe(verifier);
    await expect(driver.put('obj-2', verifier, bad.length, 'image/jpeg')).rejects.toMatchObject({
      status: 415,
      code: 'SIGNATURE_MISMATCH',
    });
    expect(store.has('/evidence/objects/obj-2')).toBe(false);
  });

  it('refuses keys that are not ids (no path traversal by construction)', async () => {
    const driver = createS3Driver(settings());
    await expect(driver.put('../x', Readable.from([Buffer.from('a')]), 1, 'image/png')).rejects.toThrow(/invalid storage key/);
  });
});

describe('the whole flow over HTTP with STORAGE_DRIVER=s3', () => {
  let t: TestApp;
  let customer: Session;
  beforeAll(async () => {
    t = await createTestApp({
      raw: {
        STORAGE_DRIVER: 's3',
        S3_ENDPOINT: endpoint,
        S3_BUCKET: 'uploads',
        S3_REGION: 'eu-west-1',
        S3_FORCE_PATH_STYLE: 'true',
        S3_ACCESS_KEY_ID: 'AKIDAPP',
        S3_SECRET_ACCESS_KEY: 'app-secret',
      },
    });
    customer = await t.as('customer');
  });
  afterAll(() => t?.close());

  async function slot(bytes: Buffer, mime: string) {
    const res = await t.req(customer, {
      method: 'POST',
      url: '/storage/generic/uploads',
      payload: { purpose: 'document', mime_type: mime, size_bytes: bytes.length, filename: 'x' },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  }
  const put = (s: { upload_id: string; upload_token: string; mime_type: string }, bytes: Buffer) =>
    t.req(customer, {
      method: 'PUT',
      url: `/storage/uploads/${s.upload_id}`,
      payload: bytes,
      headers: { 'content-type': s.mime_type, 'x-upload-token': s.upload_token },
    });

  it('stores in the bucket (not on disk), records driver s3, downloads and ranges through S3', async () => {
    const bytes = png(32);
    const s = await slot(bytes, 'image/png');
    const res = await put(s, bytes);
    expect(res.statusCode, res.body).toBe(201);
    expect(store.get(`/uploads/objects/${s.object_id}`)?.equals(bytes)).toBe(true);
    expect(existsSync(path.join(t.config.dataDir, 'objects', s.object_id))).toBe(false);
    const row = (await t.db.withSystem((tx) => tx.query('SELECT driver, sha256 FROM private_storage_object WHERE id = $1', [s.object_id])))
      .rows[0];
    expect(row).toEqual({ driver: 's3', sha256: sha256(bytes) });

    const dl = await t.req(customer, { method: 'GET', url: `/storage/objects/${s.object_id}` });
    expect(dl.statusCode).toBe(200);
    expect(dl.rawPayload.equals(bytes)).toBe(true);
    const part = await t.req(customer, { method: 'GET', url: `/storage/objects/${s.object_id}`, headers: { range: 'bytes=3-7' } });
    expect(part.statusCode).toBe(206);
    expect(part.rawPayload.equals(bytes.subarray(3, 8))).toBe(true);
  });

  it('a signature mismatch stores nothing in the bucket and writes no row', async () => {
    const bad = Buffer.concat([peExecutable(), Buffer.alloc(10_000)]);
    const s = await slot(bad, 'image/jpeg');
    const res = await put(s, bad);
    expect(res.statusCode).toBe(415);
    expect(store.has(`/uploads/objects/${s.object_id}`)).toBe(false);
    const rows = (await t.db.withSystem((tx) => tx.query('SELECT 1 FROM private_storage_object WHERE id = $1', [s.object_id]))).rows;
    expect(rows).toHaveLength(0);
  });
});
