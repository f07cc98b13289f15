import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { DEMO_PASSWORD } from '../../src/seed.js';
import { SUBADMIN_PERMISSION_KEYS, tenantOf, type Actor, type PermissionKey } from '../../src/platform/auth.js';
import { pt, tripDb } from '../logistics/fixtures.js';
import { JPEG, png, sha256 } from './fixtures.js';

let t: TestApp;
const s = {} as Record<
  | 'admin'
  | 'dispatch'
  | 'merchant'
  | 'customer'
  | 'driver'
  | 'driver2'
  | 'customer2'
  | 'merchant2'
  | 'subA'
  | 'subB'
  | 'otherAdmin'
  | 'otherDriver',
  Session
>;
/** Real trips (logistics): trip1 of the demo merchant and customer, accepted by the demo driver; trip2 another pending trip. */
let trip1: string;
let trip2: string;
let terrA: string;

beforeAll(async () => {
  t = await createTestApp();
  const org = t.demo.organizationId;
  const extra = { driver2: 'repartidor', customer2: 'delivery', merchant2: 'comercio' } as const;
  await t.db.withSystem(async (tx) => {
    const out: Record<string, string> = {};
    for (const [name, role] of Object.entries(extra)) {
      const u = await t.app.services.identity.insertUser(tx, org, {
        email: `${name.toLowerCase()}@demo.test`,
        password: DEMO_PASSWORD,
        display_name: name,
        role,
      });
      out[name] = u.id;
    }
    return out;
  });
  for (const role of ['admin', 'dispatch', 'merchant', 'customer', 'driver'] as const) s[role] = await t.as(role);
  const demo = (
    await t.db.withSystem((tx) =>
      tx.query(
        'SELECT (SELECT id FROM merchant WHERE owner_user_id = $1) AS merchant_id, (SELECT id FROM driver WHERE user_id = $2) AS driver_id',
        [t.demo.users.merchant, t.demo.users.driver],
      ),
    )
  ).rows[0];
  const newTrip = async (extra: Record<string, unknown>) => {
    const r = await t.req(s.dispatch, {
      method: 'POST',
      url: '/trips',
      payload: {
        pickup_location: pt(-68.13, -16.5),
        pickup_address: 'Pickup 1',
        dropoff_location: pt(-68.12, -16.51),
        dropoff_address: 'Dropoff 2',
        ...extra,
      },
    });
    expect(r.statusCode, r.body).toBe(201);
    return r.json() as { id: string; territory_id: string };
  };
  const first = await newTrip({ merchant_id: demo.merchant_id, customer_user_id: t.demo.users.customer });
  trip1 = first.id;
  terrA = first.territory_id;
  expect(terrA).toBeTruthy();
  trip2 = (await newTrip({})).id;
  expect(
    (await t.req(s.dispatch, { method: 'POST', url: `/trips/${trip1}/assign`, payload: { driver_id: demo.driver_id } })).statusCode,
  ).toBe(200);
  expect((await t.req(s.driver, { method: 'POST', url: `/driver/trips/${trip1}/accept` })).statusCode).toBe(200);
  // Sub-administrators with every permission: subA covers the demo territory, subB another one.
  const permissions = Object.fromEntries(SUBADMIN_PERMISSION_KEYS.map((k) => [k, true])) as Record<PermissionKey, boolean>;
  const square = {
    type: 'Polygon',
    coordinates: [
      [
        [-60, -10],
        [-59.9, -10],
        [-59.9, -9.9],
        [-60, -9.9],
        [-60, -10],
      ],
    ],
  };
  const terrB = (await t.req(s.admin, { method: 'POST', url: '/territories', payload: { name: 'B', geometry: square } })).json().id;
  for (const [name, territory] of [
    ['subA', terrA],
    ['subB', terrB],
  ] as const) {
    const payload = {
      email: `${name.toLowerCase()}@demo.test`,
      password: DEMO_PASSWORD,
      display_name: name,
      territory_ids: [territory],
      permissions,
    };
    const created = await t.req(s.admin, { method: 'POST', url: '/admin/subadmins', payload });
    expect(created.statusCode, created.body).toBe(201);
    s[name] = await t.login(payload.email);
  }
  for (const name of Object.keys(extra) as (keyof typeof extra)[]) s[name] = await t.login(`${name.toLowerCase()}@demo.test`);
  const other = await t.newOrganization();
  s.otherAdmin = await t.login(other.logins.admin);
  s.otherDriver = await t.login(other.logins.driver);
});
afterAll(() => t?.close());

async function upload(session: Session, url: string, body: Record<string, unknown>, bytes: Buffer) {
  const slot = await t.req(session, { method: 'POST', url, payload: { filename: 'file', ...body, size_bytes: bytes.length } });
  expect(slot.statusCode, slot.body).toBe(201);
  const { upload_id, upload_token, mime_type } = slot.json();
  const res = await t.req(session, {
    method: 'PUT',
    url: `/storage/uploads/${upload_id}`,
    payload: bytes,
    headers: { 'content-type': mime_type, 'x-upload-token': upload_token },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}
const evidence = (session: Session, body: Record<string, unknown>, bytes: Buffer = JPEG) =>
  upload(
    session,
    '/storage/evidence/uploads',
    { trip_id: trip1, stage: 'pickup', proof_type: 'photo', mime_type: 'image/jpeg', filename: 'pickup.jpg', ...body },
    bytes,
  );
const generic = (session: Session, body: Record<string, unknown>, bytes: Buffer) =>
  upload(session, '/storage/generic/uploads', { purpose: 'avatar', mime_type: 'image/png', filename: 'avatar.png', ...body }, bytes);
const get = (session: Session | null, id: string, headers: Record<string, string> = {}) =>
  t.req(session, { method: 'GET', url: `/storage/objects/${id}`, headers });

describe('evidence slots', () => {
  const slotCount = async () => (await t.db.withSystem((tx) => tx.query('SELECT count(*)::int AS n FROM storage_upload'))).rows[0].n;
  const ask = (session: Session, body: Record<string, unknown> = {}) =>
    t.req(session, {
      method: 'POST',
      url: '/storage/evidence/uploads',
      payload: {
        trip_id: trip1,
        stage: 'delivery',
        proof_type: 'signature',
        mime_type: 'image/png',
        size_bytes: 100,
        filename: 'sig.png',
        ...body,
      },
    });

  it('the assigned driver uploads pickup evidence; trip, stage and territory are recorded', async () => {
    const o = await evidence(s.driver, {});
    expect(o).toMatchObject({
      purpose: 'pickup_evidence',
      trip_id: trip1,
      stage: 'pickup',
      proof_type: 'photo',
      territory_id: terrA,
      owner_type: 'trip',
      owner_id: trip1,
      sha256: sha256(JPEG),
    });
    const row = (await t.db.withSystem((tx) => tx.query('SELECT * FROM private_storage_object WHERE id = $1', [o.id]))).rows[0];
    expect(row).toMatchObject({
      purpose: 'pickup_evidence',
      trip_id: trip1,
      stage: 'pickup',
      territory_id: terrA,
      created_by_user_id: s.driver.userId,
    });
  });

  it('delivery stage gives delivery_evidence; dispatch and administrators may open slots too', async () => {
    for (const who of [s.dispatch, s.admin]) {
      const res = await ask(who);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject({ purpose: 'delivery_evidence', stage: 'delivery', proof_type: 'signature', trip_id: trip1 });
    }
  });

  it.each([
    ['a driver not assigned to the trip', 'driver2', {}, 403, 'NOT_TRIP_DRIVER'],
    ['a customer (role not allowed)', 'customer', {}, 403, 'FORBIDDEN'],
    ['the merchant of the trip (role not allowed)', 'merchant', {}, 403, 'FORBIDDEN'],
    ['an unknown trip', 'driver', { trip_id: 'trip-404' }, 404, 'NOT_FOUND'],
    ['a driver of another organization', 'otherDriver', {}, 404, 'NOT_FOUND'],
    ['an unknown stage', 'driver', { stage: 'transit' }, 400, 'VALIDATION_FAILED'],
    ['an unknown proof_type', 'driver', { proof_type: 'video' }, 400, 'VALIDATION_FAILED'],
    ['a PDF (evidence is an image)', 'driver', { mime_type: 'application/pdf' }, 415, 'MEDIA_TYPE_NOT_ALLOWED'],
    ['a size over 15 MiB', 'driver', { size_bytes: 15 * 1024 * 1024 + 1 }, 413, 'UPLOAD_TOO_LARGE'],
  ] as const)('refused: %s', async (_name, who, body, status, code) => {
    const before = await slotCount();
    const res = await ask(s[who], body);
    expect(res.statusCode, res.body).toBe(status);
    expect(res.json().code).toBe(code);
    expect(await slotCount()).toBe(before);
  });
});

describe('who may download', () => {
  let ev: { id: string };
  let avatar: { id: string; sha256: string; size_bytes: number };
  let avatarBytes: Buffer;
  beforeAll(async () => {
    ev = await evidence(s.driver, { stage: 'delivery', proof_type: 'photo', filename: 'entrega final.jpg' });
    avatarBytes = png(4);
    avatar = await generic(s.customer, {}, avatarBytes);
  });

  it.each([
    ['driver', 200, 'uploader'],
    ['admin', 200, 'administrator'],
    ['dispatch', 200, 'dispatch'],
    ['merchant', 200, "the trip's merchant"],
    ['customer', 200, "the trip's customer"],
    ['subA', 200, 'sub-administrator of the territory'],
    ['subB', 404, 'sub-administrator of another territory'],
    ['driver2', 404, 'another driver'],
    ['customer2', 404, 'another customer'],
    ['merchant2', 404, 'another merchant'],
    ['otherAdmin', 404, 'administrator of another organization'],
  ] as const)('trip evidence: %s -> %i (%s)', async (who, status, _why) => {
    const res = await get(s[who], ev.id);
    expect(res.statusCode).toBe(status);
    if (status === 200) expect(res.rawPayload.equals(JPEG)).toBe(true);
    else expect(res.json().code).toBe('NOT_FOUND');
  });

  it.each([
    ['customer', 200],
    ['admin', 200],
    ['dispatch', 200],
    ['merchant', 404],
    ['driver', 404],
    ['subA', 404],
    ['otherAdmin', 404],
  ] as const)('avatar of the customer: %s -> %i', async (who, status) => {
    expect((await get(s[who], avatar.id)).statusCode).toBe(status);
  });

  it('no token: 401; unknown id: 404', async () => {
    expect((await get(null, avatar.id)).statusCode).toBe(401);
    expect((await get(s.admin, 'no-such-object')).statusCode).toBe(404);
  });

  it('sends the content headers', async () => {
    const res = await get(s.customer, avatar.id);
    expect(res.headers).toMatchObject({
      'content-type': 'image/png',
      'content-length': String(avatarBytes.length),
      etag: `"${avatar.sha256}"`,
      'cache-control': 'private',
      'x-content-type-options': 'nosniff',
      'accept-ranges': 'bytes',
      'content-disposition': `attachment; filename="avatar.png"; filename*=UTF-8''avatar.png`,
    });
    const evRes = await get(s.admin, ev.id);
    expect(evRes.headers['content-disposition']).toBe(`attachment; filename="entrega final.jpg"; filename*=UTF-8''entrega%20final.jpg`);
  });

  it('HEAD: the same headers, no body, same authorization', async () => {
    const res = await t.req(s.customer, { method: 'HEAD', url: `/storage/objects/${avatar.id}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-length']).toBe(String(avatarBytes.length));
    expect(res.headers.etag).toBe(`"${avatar.sha256}"`);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.rawPayload.length).toBe(0);
    expect((await t.req(s.merchant, { method: 'HEAD', url: `/storage/objects/${avatar.id}` })).statusCode).toBe(404);
    expect((await t.req(s.otherAdmin, { method: 'HEAD', url: `/storage/objects/${avatar.id}` })).statusCode).toBe(404);
  });

  it('If-None-Match with the ETag: 304', async () => {
    const res = await get(s.customer, avatar.id, { 'if-none-match': `"${avatar.sha256}"` });
    expect(res.statusCode).toBe(304);
    expect(res.rawPayload.length).toBe(0);
    expect((await get(s.customer, avatar.id, { 'if-none-match': '"other"' })).statusCode).toBe(200);
  });
});

describe('Range requests', () => {
  let obj: { id: string };
  let bytes: Buffer;
  beforeAll(async () => {
    bytes = png(64);
    obj = await generic(s.customer, { purpose: 'document' }, bytes);
  });
  const size = () => bytes.length;

  it.each([
    ['bytes=0-99', 0, 99],
    ['bytes=100-', 100, -1],
    ['bytes=-10', -10, -1],
    ['bytes=5000-99999999', 5000, -1],
  ])('%s: 206 with Content-Range and the right bytes', async (range, start, end) => {
    const from = start < 0 ? size() + start : start;
    const to = end < 0 ? size() - 1 : end;
    const res = await get(s.customer, obj.id, { range });
    expect(res.statusCode).toBe(206);
    expect(res.headers['content-range']).toBe(`bytes ${from}-${to}/${size()}`);
    expect(res.headers['content-length']).toBe(String(to - from + 1));
    expect(res.rawPayload.equals(bytes.subarray(from, to + 1))).toBe(true);
  });

  it('a range past the end: 416 with Content-Range bytes */size', async () => {
    const res = await get(s.customer, obj.id, { range: `bytes=${size()}-` });
    expect(res.statusCode).toBe(416);
    expect(res.headers['content-range']).toBe(`bytes */${size()}`);
    expect(res.json().code).toBe('RANGE_NOT_SATISFIABLE');
  });

  it.each(['bytes=0-1,5-6', 'items=0-5', 'bytes=9-3'])('%s is ignored: 200 with the whole object', async (range) => {
    const res = await get(s.customer, obj.id, { range });
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.equals(bytes)).toBe(true);
  });

  it('a range request by someone who may not read: 404', async () => {
    expect((await get(s.merchant, obj.id, { range: 'bytes=0-9' })).statusCode).toBe(404);
  });
});

describe('links from other records', () => {
  const docCount = async () => (await t.db.withSystem((tx) => tx.query('SELECT count(*)::int AS n FROM document'))).rows[0].n;
  const submit = (session: Session, storageObjectId: string) =>
    t.req(session, {
      method: 'POST',
      url: '/documents',
      payload: { subject_type: 'user', doc_type: 'id_card', title: 'ID', storage_object_id: storageObjectId },
    });

  it('a document links an object of purpose document uploaded by the same user', async () => {
    const pdfLike = JPEG; // an image is a valid document
    const o = await generic(s.customer, { purpose: 'document', mime_type: 'image/jpeg' }, pdfLike);
    const res = await submit(s.customer, o.id);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().storage_object_id).toBe(o.id);
  });

  it.each([
    ['an object of another purpose', async () => (await generic(s.customer, {}, png(1))).id, 'STORAGE_OBJECT_WRONG_PURPOSE'],
    [
      'an object uploaded by someone else',
      async () => (await generic(s.merchant, { purpose: 'document' }, png(1))).id,
      'STORAGE_OBJECT_NOT_OWNED',
    ],
    [
      'an object of another organization',
      async () => {
        const otherCustomer = await t.login((await t.newOrganization()).logins.customer);
        return (await generic(otherCustomer, { purpose: 'document' }, png(1))).id;
      },
      'STORAGE_OBJECT_NOT_FOUND',
    ],
    ['a missing object', async () => 'missing-object', 'STORAGE_OBJECT_NOT_FOUND'],
  ])('refused (422): %s', async (_name, make, code) => {
    const id = await make();
    const before = await docCount();
    const res = await submit(s.customer, id);
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().code).toBe(code);
    expect(await docCount()).toBe(before);
  });

  it('evidence links check the trip and the stage', async () => {
    const o = await evidence(s.driver, { stage: 'pickup' });
    const actor: Actor = {
      userId: s.driver.userId,
      organizationId: s.driver.organizationId,
      role: 'repartidor',
      kind: 'repartidor',
      sessionId: 'x',
      requestId: 'x',
      subadmin: null,
    };
    const check = (opts: { tripId?: string; stage?: string }, purposes = ['pickup_evidence'] as const) =>
      t.db.withTenant(tenantOf(actor), (tx) => t.app.services.storage.assertLinkable(tx, actor, o.id, purposes, opts));
    await expect(check({ tripId: trip1, stage: 'pickup' })).resolves.toBeUndefined();
    await expect(check({ tripId: trip2, stage: 'pickup' })).rejects.toMatchObject({ status: 422, code: 'STORAGE_OBJECT_WRONG_TRIP' });
    await expect(check({ tripId: trip1, stage: 'delivery' })).rejects.toMatchObject({ status: 422, code: 'STORAGE_OBJECT_WRONG_STAGE' });
    await expect(
      t.db.withTenant(tenantOf(actor), (tx) =>
        t.app.services.storage.assertLinkable(tx, actor, o.id, ['delivery_evidence'], { tripId: trip1 }),
      ),
    ).rejects.toMatchObject({ status: 422, code: 'STORAGE_OBJECT_WRONG_PURPOSE' });
  });
});

describe('end to end: trip evidence through logistics', () => {
  it('the driver uploads a PNG, verifies the pickup with it; the proof lists it; trip merchant and customer may download it, another driver not; evidence of another trip is 422', async () => {
    const bytes = png(6);
    // Evidence of another trip (opened by dispatch, which may upload for any trip): refused at the pickup of trip1, nothing written.
    const foreign = await evidence(
      s.dispatch,
      { trip_id: trip2, stage: 'pickup', proof_type: 'photo', mime_type: 'image/png', filename: 'other.png' },
      png(2),
    );
    const pin = (await tripDb(t, trip1)).pickup_pin;
    const wrong = await t.req(s.driver, {
      method: 'POST',
      url: `/trips/${trip1}/verify-pickup`,
      payload: { pin, evidence: { type: 'photo', storage_key: foreign.id } },
    });
    expect(wrong.statusCode, wrong.body).toBe(422);
    expect(wrong.json().code).toBe('STORAGE_OBJECT_WRONG_TRIP');
    expect((await tripDb(t, trip1)).status).toBe('accepted');

    const o = await evidence(s.driver, { stage: 'pickup', proof_type: 'photo', mime_type: 'image/png', filename: 'pickup.png' }, bytes);
    expect(o).toMatchObject({ trip_id: trip1, stage: 'pickup', purpose: 'pickup_evidence', sha256: sha256(bytes) });
    // The evidence type must be what the slot was opened for: a photo is not a signature.
    const mislabelled = await t.req(s.driver, {
      method: 'POST',
      url: `/trips/${trip1}/verify-pickup`,
      payload: { pin, evidence: { type: 'signature', storage_key: o.id } },
    });
    expect(mislabelled.statusCode, mislabelled.body).toBe(422);
    expect(mislabelled.json().code).toBe('STORAGE_OBJECT_WRONG_TYPE');
    expect((await tripDb(t, trip1)).status).toBe('accepted');
    const ok = await t.req(s.driver, {
      method: 'POST',
      url: `/trips/${trip1}/verify-pickup`,
      payload: { pin, evidence: { type: 'photo', storage_key: o.id } },
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect((await tripDb(t, trip1)).status).toBe('picked_up');

    const proofs = await t.req(s.dispatch, { method: 'GET', url: `/trips/${trip1}/proofs` });
    expect(proofs.statusCode, proofs.body).toBe(200);
    const list = proofs.json().data ?? proofs.json();
    expect(list).toEqual([
      expect.objectContaining({ stage: 'pickup', pin_verified: true, evidence: { type: 'photo', storage_key: o.id } }),
    ]);

    for (const who of ['merchant', 'customer', 'driver'] as const) {
      const res = await get(s[who], o.id);
      expect(res.statusCode, who).toBe(200);
      expect(res.rawPayload.equals(bytes)).toBe(true);
    }
    for (const who of ['driver2', 'customer2', 'merchant2', 'otherDriver'] as const)
      expect((await get(s[who], o.id)).statusCode, who).toBe(404);
  });
});

describe('images people are told to show', () => {
  it('the organization logo and catalog photos are readable by its customers; unlinked objects are not', async () => {
    const logo = await generic(s.admin, { purpose: 'avatar' }, png(3));
    expect((await get(s.customer, logo.id)).statusCode).toBe(404);
    const branded = await t.req(s.admin, {
      method: 'PATCH',
      url: `/organizations/${s.admin.organizationId}/branding`,
      payload: { logo_object_id: logo.id },
    });
    expect(branded.statusCode, branded.body).toBe(200);
    const assets = (await t.req(s.customer, { method: 'GET', url: '/mobile/brand-assets' })).json();
    expect(JSON.stringify(assets)).toContain(logo.id);
    expect((await get(s.customer, logo.id)).statusCode).toBe(200);
    expect((await get(s.otherAdmin, logo.id)).statusCode).toBe(404);

    const photo = await generic(s.merchant, { purpose: 'other' }, png(4));
    const stray = await generic(s.merchant, { purpose: 'other' }, png(5));
    const item = await t.req(s.merchant, {
      method: 'POST',
      url: '/merchant/catalog',
      payload: { name: 'Pizza', price: '10.00', image_object_id: photo.id },
    });
    expect(item.statusCode, item.body).toBe(201);
    expect((await get(s.customer, photo.id)).statusCode).toBe(200);
    expect((await get(s.customer2, photo.id)).statusCode).toBe(200);
    expect((await get(s.customer, stray.id)).statusCode).toBe(404);
    expect((await get(s.otherDriver, photo.id)).statusCode).toBe(404);
  });
});
