import { existsSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { HTML, JPEG, peExecutable, png, sha256 } from './fixtures.js';

let t: TestApp;
let customer: Session;
let merchant: Session;
const objectsDir = () => path.join(t.config.dataDir, 'objects');

beforeAll(async () => {
  // A small configured limit for coupon assets, to check that per-purpose limits come from the configuration.
  t = await createTestApp({ raw: { STORAGE_MAX_BYTES_COUPON_ASSET: '1000' } });
  customer = await t.as('customer');
  merchant = await t.as('merchant');
});
afterAll(() => t?.close());

interface SlotBody {
  purpose?: string;
  mime_type?: string;
  size_bytes?: number;
  filename?: string;
  [k: string]: unknown;
}

async function openSlot(s: Session, body: SlotBody) {
  return t.req(s, { method: 'POST', url: '/storage/generic/uploads', payload: { purpose: 'avatar', filename: 'me.png', ...body } });
}

async function slotFor(s: Session, bytes: Buffer, mime = 'image/png', extra: SlotBody = {}) {
  const res = await openSlot(s, { mime_type: mime, size_bytes: bytes.length, ...extra });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

function put(
  s: Session | null,
  slot: { upload_id: string; upload_token: string; mime_type: string },
  payload: Buffer | Readable,
  headers: Record<string, string> = {},
) {
  return t.req(s, {
    method: 'PUT',
    url: `/storage/uploads/${slot.upload_id}`,
    payload,
    headers: { 'content-type': slot.mime_type, 'x-upload-token': slot.upload_token, ...headers },
  });
}

const slotRow = async (id: string) => (await t.db.withSystem((tx) => tx.query('SELECT * FROM storage_upload WHERE id = $1', [id]))).rows[0];
const objectRows = async (uploadId: string) =>
  (await t.db.withSystem((tx) => tx.query('SELECT * FROM private_storage_object WHERE upload_id = $1', [uploadId]))).rows;
const leftovers = () => (existsSync(objectsDir()) ? readdirSync(objectsDir()).filter((f) => f.endsWith('.partial')) : []);

/** No object row, no file, no partial, and the slot is open again. */
async function expectNothingStored(slot: { upload_id: string; object_id: string }) {
  expect(await objectRows(slot.upload_id)).toHaveLength(0);
  expect(existsSync(path.join(objectsDir(), slot.object_id))).toBe(false);
  expect(leftovers()).toEqual([]);
  expect((await slotRow(slot.upload_id)).status).toBe('open');
}

describe('generic upload flow', () => {
  it('opens a slot, uploads a real PNG, stores it by object id with its SHA-256, consumes the slot', async () => {
    const bytes = png(8);
    const slot = await slotFor(customer, bytes, 'image/png', { filename: '../../etc/passwd\u0000 me.png' });
    expect(slot).toMatchObject({
      upload_method: 'PUT',
      upload_url: `/api/v1/storage/uploads/${slot.upload_id}`,
      purpose: 'avatar',
      mime_type: 'image/png',
      size_bytes: bytes.length,
      filename: 'passwd me.png',
      limits: { max_bytes: 5 * 1024 * 1024, allowed_mime_types: ['image/jpeg', 'image/png', 'image/webp', 'image/heic', 'image/heif'] },
    });
    expect(slot.required_headers['X-Upload-Token']).toBe(slot.upload_token);
    const expiresIn = new Date(slot.expires_at).getTime() - Date.now();
    expect(expiresIn).toBeGreaterThan(14 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(15 * 60_000 + 5_000);

    const row = await slotRow(slot.upload_id);
    expect(row.status).toBe('open');
    expect(row.token_hash).toBe(sha256(Buffer.from(slot.upload_token)));
    expect(JSON.stringify(row)).not.toContain(slot.upload_token);

    const res = await put(customer, slot, bytes);
    expect(res.statusCode, res.body).toBe(201);
    const obj = res.json();
    expect(obj).toMatchObject({
      id: slot.object_id,
      purpose: 'avatar',
      mime_type: 'image/png',
      size_bytes: bytes.length,
      sha256: sha256(bytes),
      created_by_user_id: customer.userId,
      download_url: `/api/v1/storage/objects/${slot.object_id}`,
    });

    expect(readFileSync(path.join(objectsDir(), slot.object_id)).equals(bytes)).toBe(true);
    expect(leftovers()).toEqual([]);
    const [stored] = await objectRows(slot.upload_id);
    expect(stored).toMatchObject({
      id: slot.object_id,
      organization_id: customer.organizationId,
      sha256: sha256(bytes),
      driver: 'local',
      purpose: 'avatar',
      filename: 'passwd me.png',
    });
    expect((await slotRow(slot.upload_id)).status).toBe('completed');

    const dl = await t.req(customer, { method: 'GET', url: `/storage/objects/${slot.object_id}` });
    expect(dl.statusCode).toBe(200);
    expect(dl.rawPayload.equals(bytes)).toBe(true);
  });

  it('accepts a JPEG and a PDF-capable purpose', async () => {
    const slot = await slotFor(merchant, JPEG, 'image/jpeg', {
      purpose: 'payment_proof',
      filename: 'receipt.jpg',
      owner_type: 'payment_review',
      owner_id: 'rev-1',
    });
    const res = await put(merchant, slot, JPEG);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ purpose: 'payment_proof', owner_type: 'payment_review', owner_id: 'rev-1', sha256: sha256(JPEG) });
  });

  it('streams an upload sent without Content-Length (chunked) and larger than the sniffing buffer', async () => {
    const bytes = png(64);
    expect(bytes.length).toBeGreaterThan(10_000);
    const slot = await slotFor(customer, bytes);
    const chunks = Array.from({ length: Math.ceil(bytes.length / 1000) }, (_, i) => bytes.subarray(i * 1000, (i + 1) * 1000));
    const res = await put(customer, slot, Readable.from(chunks));
    expect(res.statusCode, res.body).toBe(201);
    expect(readFileSync(path.join(objectsDir(), slot.object_id)).equals(bytes)).toBe(true);
  });
});

describe('slot requests refused', () => {
  const count = async () => (await t.db.withSystem((tx) => tx.query('SELECT count(*)::int AS n FROM storage_upload'))).rows[0].n;

  it.each([
    [
      'a type not allowed for the purpose',
      { purpose: 'avatar', mime_type: 'application/pdf', size_bytes: 100 },
      415,
      'MEDIA_TYPE_NOT_ALLOWED',
    ],
    ['a type outside every list', { purpose: 'document', mime_type: 'text/html', size_bytes: 100 }, 400, 'VALIDATION_FAILED'],
    [
      'a size over the default limit',
      { purpose: 'avatar', mime_type: 'image/png', size_bytes: 5 * 1024 * 1024 + 1 },
      413,
      'UPLOAD_TOO_LARGE',
    ],
    ['a size over a configured limit', { purpose: 'coupon_asset', mime_type: 'image/png', size_bytes: 1001 }, 413, 'UPLOAD_TOO_LARGE'],
    ['an evidence purpose', { purpose: 'pickup_evidence', mime_type: 'image/png', size_bytes: 100 }, 400, 'VALIDATION_FAILED'],
    ['a zero size', { purpose: 'avatar', mime_type: 'image/png', size_bytes: 0 }, 400, 'VALIDATION_FAILED'],
    ['an unknown field', { purpose: 'avatar', mime_type: 'image/png', size_bytes: 10, path: '/tmp/x' }, 400, 'VALIDATION_FAILED'],
    [
      'owner_type without owner_id',
      { purpose: 'avatar', mime_type: 'image/png', size_bytes: 10, owner_type: 'user' },
      400,
      'VALIDATION_FAILED',
    ],
  ])('%s', async (_name, body, status, code) => {
    const before = await count();
    const res = await openSlot(customer, body);
    expect(res.statusCode, res.body).toBe(status);
    expect(res.json().code).toBe(code);
    expect(await count()).toBe(before);
  });

  it('reports the configured limit of a purpose', async () => {
    const slot = await slotFor(merchant, png(1), 'image/png', { purpose: 'coupon_asset' });
    expect(slot.limits.max_bytes).toBe(1000);
  });

  it('needs authentication', async () => {
    const res = await t.req(null, {
      method: 'POST',
      url: '/storage/generic/uploads',
      payload: { purpose: 'avatar', mime_type: 'image/png', size_bytes: 10, filename: 'a.png' },
    });
    expect(res.statusCode).toBe(401);
  });
});

describe('PUT refusals', () => {
  it('wrong or missing upload token: 403, nothing stored, slot still usable', async () => {
    const bytes = png(2);
    const slot = await slotFor(customer, bytes);
    const wrong = await put(customer, slot, bytes, { 'x-upload-token': slot.upload_token.slice(0, -2) + 'xx' });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json().code).toBe('UPLOAD_TOKEN_INVALID');
    const missing = await t.req(customer, {
      method: 'PUT',
      url: `/storage/uploads/${slot.upload_id}`,
      payload: bytes,
      headers: { 'content-type': 'image/png' },
    });
    expect(missing.statusCode).toBe(403);
    await expectNothingStored(slot);
    expect((await put(customer, slot, bytes)).statusCode).toBe(201);
  });

  it('another user with the right token: 404; without Authorization: 401', async () => {
    const bytes = png(2);
    const slot = await slotFor(customer, bytes);
    const other = await put(merchant, slot, bytes);
    expect(other.statusCode).toBe(404);
    expect((await put(null, slot, bytes)).statusCode).toBe(401);
    await expectNothingStored(slot);
  });

  it('another organization: 404', async () => {
    const org = await t.newOrganization();
    const stranger = await t.login(org.logins.customer);
    const bytes = png(2);
    const slot = await slotFor(customer, bytes);
    expect((await put(stranger, slot, bytes)).statusCode).toBe(404);
    await expectNothingStored(slot);
  });

  it('a used slot: 409 with the object id; the object is unchanged', async () => {
    const bytes = png(3);
    const slot = await slotFor(customer, bytes);
    expect((await put(customer, slot, bytes)).statusCode).toBe(201);
    const again = await put(customer, slot, png(3));
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'UPLOAD_ALREADY_COMPLETED', object_id: slot.object_id });
    expect(readFileSync(path.join(objectsDir(), slot.object_id)).equals(bytes)).toBe(true);
    expect(await objectRows(slot.upload_id)).toHaveLength(1);
  });

  it('two concurrent PUTs: exactly one wins', async () => {
    const a = png(40);
    const b = png(40);
    expect(a.length).toBe(b.length);
    const slot = await slotFor(customer, a);
    const results = await Promise.all([put(customer, slot, a), put(customer, slot, b)]);
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes).toEqual([201, 409]);
    const winner = results.find((r) => r.statusCode === 201)!;
    const loser = results.find((r) => r.statusCode === 409)!;
    expect(['UPLOAD_IN_PROGRESS', 'UPLOAD_ALREADY_COMPLETED']).toContain(loser.json().code);
    const rows = await objectRows(slot.upload_id);
    expect(rows).toHaveLength(1);
    const file = readFileSync(path.join(objectsDir(), slot.object_id));
    expect(sha256(file)).toBe(winner.json().sha256);
    expect(rows[0].sha256).toBe(winner.json().sha256);
    expect(leftovers()).toEqual([]);
  });

  it('an expired slot: 410', async () => {
    const bytes = png(2);
    const slot = await slotFor(customer, bytes);
    await t.db.withSystem((tx) =>
      tx.query(`UPDATE storage_upload SET expires_at = now() - interval '1 second' WHERE id = $1`, [slot.upload_id]),
    );
    const res = await put(customer, slot, bytes);
    expect(res.statusCode).toBe(410);
    expect(res.json().code).toBe('UPLOAD_EXPIRED');
    await expectNothingStored(slot);
  });

  it('Content-Type different from the declared type: 415', async () => {
    const bytes = png(2);
    const slot = await slotFor(customer, bytes);
    const res = await put(customer, slot, bytes, { 'content-type': 'image/jpeg' });
    expect(res.statusCode).toBe(415);
    expect(res.json().code).toBe('CONTENT_TYPE_MISMATCH');
    const none = await t.req(customer, {
      method: 'PUT',
      url: `/storage/uploads/${slot.upload_id}`,
      payload: bytes,
      headers: { 'x-upload-token': slot.upload_token },
    });
    expect(none.statusCode).toBe(415);
    await expectNothingStored(slot);
  });

  it.each([
    ['a PE executable declared image/jpeg', peExecutable(), 'image/jpeg', 'application/x-msdownload'],
    ['an HTML file declared image/jpeg', HTML, 'image/jpeg', null],
    ['a PNG declared image/jpeg', png(2), 'image/jpeg', 'image/png'],
    ['a JPEG declared application/pdf', JPEG, 'application/pdf', 'image/jpeg'],
  ])('%s: 415 SIGNATURE_MISMATCH, nothing stored', async (_name, bytes, mime, detected) => {
    const slot = await slotFor(customer, bytes, mime, { purpose: 'document', filename: 'photo.jpg' });
    const res = await put(customer, slot, bytes);
    expect(res.statusCode, res.body).toBe(415);
    expect(res.json()).toMatchObject({ code: 'SIGNATURE_MISMATCH', detected_mime_type: detected });
    await expectNothingStored(slot);
  });

  it('a refused upload leaves the slot usable for a correct retry', async () => {
    const slot = await slotFor(customer, JPEG, 'image/jpeg', { purpose: 'document' });
    const fake = Buffer.concat([HTML, Buffer.alloc(JPEG.length - HTML.length, 0x20)]).subarray(0, JPEG.length);
    expect((await put(customer, slot, fake)).statusCode).toBe(415);
    const ok = await put(customer, slot, JPEG);
    expect(ok.statusCode).toBe(201);
    expect(ok.json().sha256).toBe(sha256(JPEG));
  });

  it('a Content-Length above the declared size: 413 before reading', async () => {
    const bytes = png(4);
    const slot = await slotFor(customer, bytes.subarray(0, bytes.length - 10));
    const res = await put(customer, slot, bytes);
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('UPLOAD_TOO_LARGE');
    await expectNothingStored(slot);
  });

  it('a streamed body running past the declared size: 413 at the first extra byte, partial file removed', async () => {
    const bytes = png(64);
    const declared = bytes.length - 1;
    const slot = await slotFor(customer, bytes.subarray(0, declared));
    let sent = 0;
    const body = new Readable({
      read() {
        if (sent >= bytes.length) return this.push(null);
        const piece = bytes.subarray(sent, sent + 4096);
        sent += piece.length;
        this.push(piece);
      },
    });
    const res = await put(customer, slot, body);
    expect(res.statusCode, res.body).toBe(413);
    expect(res.json()).toMatchObject({ code: 'UPLOAD_TOO_LARGE', max_bytes: declared });
    await expectNothingStored(slot);
  });

  it('fewer bytes than declared: 400 SIZE_MISMATCH', async () => {
    const bytes = png(4);
    const slot = await slotFor(customer, Buffer.concat([bytes, Buffer.alloc(10)]));
    const res = await put(customer, slot, Readable.from([bytes]));
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('SIZE_MISMATCH');
    const withLength = await put(customer, slot, bytes);
    expect(withLength.statusCode).toBe(400);
    await expectNothingStored(slot);
  });
});

describe('slot janitor worker', () => {
  it('deletes expired unused slots and their partial files, keeps used and live ones', async () => {
    const live = await slotFor(customer, png(1));
    const expired = await slotFor(customer, png(1));
    const used = await slotFor(customer, JPEG, 'image/jpeg');
    expect((await put(customer, used, JPEG)).statusCode).toBe(201);
    await t.db.withSystem((tx) =>
      tx.query(`UPDATE storage_upload SET expires_at = now() - interval '1 minute' WHERE id = ANY($1)`, [
        [expired.upload_id, used.upload_id],
      ]),
    );
    mkdirSync(objectsDir(), { recursive: true });
    const partial = path.join(objectsDir(), `${expired.object_id}.partial`);
    writeFileSync(partial, 'half');

    const worker = t.app.ctx.workers.find((w) => w.name === 'storage-slot-janitor')!;
    expect(await worker.tick()).toBeGreaterThanOrEqual(1);
    expect(await slotRow(expired.upload_id)).toBeUndefined();
    expect(existsSync(partial)).toBe(false);
    expect((await slotRow(live.upload_id)).status).toBe('open');
    expect((await slotRow(used.upload_id)).status).toBe('completed');
    expect(existsSync(path.join(objectsDir(), used.object_id))).toBe(true);
    expect(await worker.tick()).toBe(0);
  });
});

describe('over a real socket', () => {
  /** Writes `total` bytes (the first chunk, then zeros) and resolves with the response, even if the server stops reading. */
  function send(
    port: number,
    slot: { upload_id: string; upload_token: string; mime_type: string },
    first: Buffer,
    total: number,
    length?: number,
  ) {
    return new Promise<{ status: number; code?: string }>((resolve, reject) => {
      const headers: Record<string, string | number> = {
        authorization: `Bearer ${customer.token}`,
        'x-upload-token': slot.upload_token,
        'content-type': slot.mime_type,
      };
      if (length !== undefined) headers['content-length'] = length;
      const req = http.request(
        { host: '127.0.0.1', port, method: 'PUT', path: `/api/v1/storage/uploads/${slot.upload_id}`, headers },
        (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode!, code: body ? JSON.parse(body).code : undefined }));
        },
      );
      req.on('error', reject);
      void (async () => {
        const zeros = Buffer.alloc(65536);
        for (let sent = 0, i = 0; sent < total && !req.destroyed; i++) {
          // Exactly `total` bytes: more than a declared Content-Length would be the start of a next (malformed) request.
          const c = (i === 0 ? first : zeros).subarray(0, total - sent);
          sent += c.length;
          if (!req.write(c)) await new Promise((r) => req.once('drain', r));
        }
        req.end();
      })();
    });
  }

  it('a client streaming too much or the wrong bytes receives the 413/415, and the server keeps serving', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    const img = png(8);
    const head = Buffer.concat([img, Buffer.alloc(65536 - img.length)]);
    const over = await slotFor(customer, Buffer.alloc(200_000), 'image/png', { purpose: 'other' });
    expect(await send(port, over, head, 5_000_000)).toEqual({ status: 413, code: 'UPLOAD_TOO_LARGE' });
    const pe = await slotFor(customer, Buffer.alloc(200_000), 'image/jpeg', { purpose: 'other' });
    expect(await send(port, pe, Buffer.concat([peExecutable(), Buffer.alloc(65536 - 512)]), 200_000, 200_000)).toEqual({
      status: 415,
      code: 'SIGNATURE_MISMATCH',
    });
    await expectNothingStored(over);
    await expectNothingStored(pe);
    const ok = await slotFor(customer, img);
    expect((await send(port, ok, img, img.length, img.length)).status).toBe(201);
  });
});
