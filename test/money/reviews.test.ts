import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newUser } from '../logistics/fixtures.js';
import { DEMO_PASSWORD } from '../../src/seed.js';
import { SUBADMIN_PERMISSION_KEYS, type PermissionKey } from '../../src/platform/auth.js';
import { REVIEW_TRANSITIONS } from '../../src/modules/money/service/ledger.js';
import { png } from '../storage/fixtures.js';
import { demoShop, newBranch, newCustomer, ok, orderKit, orderRow, uploadObject, type MoneyShop, type OrderKit } from './fixtures.js';

let t: TestApp;
let admin: Session;
let merchant: Session;
let customer: Session;
let kit: OrderKit;
let shop: MoneyShop;
let m: { id: string; territory_id: string | null };

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  kit = await orderKit(t);
  const demo = await demoShop(t);
  shop = demo;
  merchant = demo.session;
  customer = kit.customer.session;
  m = { id: demo.id, territory_id: demo.territoryId };
});
afterAll(() => t?.close());

const reviewRow = async (orderId: string) =>
  (await t.db.withSystem((tx) => tx.query('SELECT * FROM merchant_payment_review WHERE order_id = $1', [orderId]))).rows[0];
/** A real order of the demo merchant (subtotal 100.00 + delivery 15.00 = 115.00), placed by the kit's customer. */
const directOrder = async (over: { destination?: 'platform' | 'merchant_direct' | 'cash'; at?: MoneyShop } = {}) =>
  (
    await kit.place(over.at ?? shop, {
      destination: over.destination ?? 'merchant_direct',
      subtotal: '100.00',
      fee: over.at ? undefined : '15.00',
    })
  ).id;
const proof = (
  orderId: string,
  payload: Record<string, unknown> = { amount: '115.00', customer_reference: 'TRX-1' },
  s: Session = customer,
) => t.req(s, { method: 'POST', url: `/customer/orders/${orderId}/payment-proof`, payload });
const cancelOrder = async (orderId: string) =>
  ok(
    await t.req(merchant, { method: 'PATCH', url: `/merchant/orders/${orderId}/status`, payload: { status: 'cancelled', reason: 'test' } }),
  );

describe('payment profile', () => {
  it('GET returns defaults before the first PATCH', async () => {
    const r = await t.req(merchant, { method: 'GET', url: '/merchant/payment-profile' });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ merchant_id: m.id, direct_payment_enabled: false, account_number_masked: null, created_at: null });
  });

  it('customers get 404 while direct payment is disabled', async () => {
    const r = await t.req(customer, { method: 'GET', url: `/customer/merchants/${m.id}/payment-profile` });
    expect(r.statusCode).toBe(404);
  });

  it('refuses enabling without a way to pay (422) and writes nothing', async () => {
    const r = await t.req(merchant, { method: 'PATCH', url: '/merchant/payment-profile', payload: { direct_payment_enabled: true } });
    expect(r.statusCode).toBe(422);
    expect(r.json().code).toBe('PAYMENT_PROFILE_INCOMPLETE');
    expect((await t.db.withSystem((tx) => tx.query('SELECT 1 FROM merchant_payment_profile'))).rowCount).toBe(0);
  });

  it('stores and returns the account number masked only; audit has no full number', async () => {
    const r = await t.req(merchant, {
      method: 'PATCH',
      url: '/merchant/payment-profile',
      payload: {
        direct_payment_enabled: true,
        account_number: '1234-5678-9012',
        bank_name: 'Banco Union',
        account_holder: 'Demo Store',
        instructions: 'Pay by transfer',
      },
    });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ direct_payment_enabled: true, account_number_masked: '****9012', bank_name: 'Banco Union' });
    expect(r.body).not.toContain('5678');
    const { rows } = await t.db.withSystem((tx) => tx.query('SELECT row_to_json(p)::text AS j FROM merchant_payment_profile p'));
    expect(rows[0].j).toContain('****9012');
    expect(rows[0].j).not.toContain('5678');
    const audit = await t.db.withSystem((tx) =>
      tx.query("SELECT after::text AS a FROM audit_log WHERE action = 'merchant_payment_profile.updated'"),
    );
    expect(audit.rows[0].a).not.toContain('5678');
    const c = await t.req(customer, { method: 'GET', url: `/customer/merchants/${m.id}/payment-profile` });
    expect(c.statusCode, c.body).toBe(200);
    expect(c.json()).toMatchObject({ merchant_id: m.id, account_number_masked: '****9012', merchant_name: 'Demo Store' });
    expect(c.json().updated_by_user_id).toBeUndefined();
  });

  it('a QR object must be a stored object of purpose merchant_payment_qr (unknown object: 422)', async () => {
    const r = await t.req(merchant, { method: 'PATCH', url: '/merchant/payment-profile', payload: { qr_storage_object_id: 'obj-1' } });
    expect(r.statusCode).toBe(422);
    expect(r.json().code).toBe('STORAGE_OBJECT_NOT_FOUND');
  });

  it('rejects unknown fields and bad account numbers (400); other roles 403; other organizations 404', async () => {
    for (const payload of [{ nope: 1 }, { account_number: '1' }, {}]) {
      expect(
        (await t.req(merchant, { method: 'PATCH', url: '/merchant/payment-profile', payload })).statusCode,
        JSON.stringify(payload),
      ).toBe(400);
    }
    expect((await t.req(customer, { method: 'PATCH', url: '/merchant/payment-profile', payload: { bank_name: 'x' } })).statusCode).toBe(
      403,
    );
    const other = await t.newOrganization();
    const oc = await t.login(other.logins.customer);
    expect((await t.req(oc, { method: 'GET', url: `/customer/merchants/${m.id}/payment-profile` })).statusCode).toBe(404);
  });
});

describe('payment proof', () => {
  it('creates a pending review and moves the order to pending_review (201)', async () => {
    const orderId = await directOrder();
    const r = await proof(orderId);
    expect(r.statusCode, r.body).toBe(201);
    expect(r.json()).toMatchObject({
      order_id: orderId,
      merchant_id: m.id,
      customer_id: customer.userId,
      amount: '115.00',
      status: 'pending',
      submissions: 1,
      territory_id: m.territory_id,
    });
    expect(await orderRow(t, orderId)).toMatchObject({ payment_status: 'pending_review', payment_review_id: r.json().id });
    const ev = await t.db.withSystem((tx) =>
      tx.query("SELECT audience_user_ids FROM event WHERE type = 'payment_review.submitted' AND entity_id = $1", [r.json().id]),
    );
    expect(ev.rows[0].audience_user_ids).toEqual([merchant.userId]);
  });

  it('refuses an amount different from the total (422), no proof and no reference (422), and writes nothing', async () => {
    const orderId = await directOrder();
    for (const [payload, code] of [
      [{ amount: '114.99', customer_reference: 'x' }, 'AMOUNT_MISMATCH'],
      [{ amount: '115.00' }, 'PROOF_REQUIRED'],
      [{ amount: '115.00', customer_reference: 'x', currency: 'USD' }, 'CURRENCY_MISMATCH'],
      [{ amount: '115.00', proof_storage_object_id: 'obj-1' }, 'STORAGE_OBJECT_NOT_FOUND'],
    ] as const) {
      const r = await proof(orderId, payload);
      expect(r.statusCode, r.body).toBe(422);
      expect(r.json().code).toBe(code);
    }
    for (const payload of [
      { amount: '-1.00', customer_reference: 'x' },
      { amount: 115, customer_reference: 'x' },
      { amount: '115.00', customer_reference: 'x', extra: 1 },
    ]) {
      expect((await proof(orderId, payload)).statusCode).toBe(400);
    }
    expect(await reviewRow(orderId)).toBeUndefined();
    expect((await orderRow(t, orderId)).payment_status).toBe('pending');
  });

  it('only the customer of a merchant_direct order: another customer 404, another organization 404, other destinations 422', async () => {
    const orderId = await directOrder();
    const u = await newUser(t, 'delivery');
    expect((await proof(orderId, undefined, await t.login(u.email))).statusCode).toBe(404);
    const other = await t.newOrganization();
    expect((await proof(orderId, undefined, await t.login(other.logins.customer))).statusCode).toBe(404);
    for (const destination of ['platform', 'cash'] as const) {
      const id = await directOrder({ destination });
      const r = await proof(id);
      expect(r.statusCode).toBe(422);
      expect(r.json().code).toBe('NOT_DIRECT_PAYMENT');
    }
    const cancelled = await directOrder();
    await cancelOrder(cancelled);
    expect((await proof(cancelled)).statusCode).toBe(409);
    expect(await reviewRow(orderId)).toBeUndefined();
  });

  it('one review per order: concurrent first proofs make one review; the loser gets 409', async () => {
    const orderId = await directOrder();
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => proof(orderId, { amount: '115.00', customer_reference: `R${i}` })),
    );
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(1);
    expect(results.filter((r) => r.statusCode === 409).every((r) => r.json().code === 'INVALID_TRANSITION')).toBe(true);
    expect(results.filter((r) => r.statusCode === 409)).toHaveLength(5);
    expect(
      (await t.db.withSystem((tx) => tx.query('SELECT count(*)::int AS n FROM merchant_payment_review WHERE order_id = $1', [orderId])))
        .rows[0].n,
    ).toBe(1);
  });
});

describe('review transitions', () => {
  it('the transition table is exactly the documented one', () => {
    expect(REVIEW_TRANSITIONS).toEqual({
      pending: ['approved', 'rejected', 'cancelled'],
      rejected: ['pending'],
      approved: [],
      cancelled: [],
    });
  });

  const decide = (id: string, action: 'approve' | 'reject', s: Session = merchant, notes = 'checked') =>
    t.req(s, { method: 'POST', url: `/merchant/payment-reviews/${id}/${action}`, payload: action === 'reject' ? { notes } : { notes } });

  it('approve: pending → approved, order paid; a second decision is 409 naming the state', async () => {
    const orderId = await directOrder();
    const id = (await proof(orderId)).json().id;
    const r = await t.req(merchant, { method: 'POST', url: `/merchant/payment-reviews/${id}/approve` });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ status: 'approved', reviewed_by_user_id: merchant.userId });
    expect((await orderRow(t, orderId)).payment_status).toBe('paid');
    for (const action of ['approve', 'reject'] as const) {
      const again = await decide(id, action);
      expect(again.statusCode).toBe(409);
      expect(again.json()).toMatchObject({ code: 'INVALID_TRANSITION', current_status: 'approved' });
    }
    expect((await proof(orderId)).statusCode).toBe(409); // paid → pending_review refused
    const audit = await t.db.withSystem((tx) =>
      tx.query("SELECT 1 FROM audit_log WHERE action = 'payment_review.approved' AND entity_id = $1", [id]),
    );
    expect(audit.rowCount).toBe(1);
  });

  it('reject needs notes; rejected → order failed; a new proof reopens the same review; then approve', async () => {
    const orderId = await directOrder();
    const id = (await proof(orderId)).json().id;
    expect((await t.req(merchant, { method: 'POST', url: `/merchant/payment-reviews/${id}/reject`, payload: {} })).statusCode).toBe(400);
    const rej = await decide(id, 'reject', merchant, 'no transfer found');
    expect(rej.statusCode, rej.body).toBe(200);
    expect(rej.json()).toMatchObject({ status: 'rejected', review_notes: 'no transfer found' });
    expect((await orderRow(t, orderId)).payment_status).toBe('failed');
    expect((await decide(id, 'approve')).json()).toMatchObject({ code: 'INVALID_TRANSITION', current_status: 'rejected' });
    const again = await proof(orderId, { amount: '115.00', customer_reference: 'TRX-2' });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ id, status: 'pending', submissions: 2, customer_reference: 'TRX-2', reviewed_at: null });
    expect((await orderRow(t, orderId)).payment_status).toBe('pending_review');
    expect((await proof(orderId)).json()).toMatchObject({ code: 'INVALID_TRANSITION', current_status: 'pending_review' });
    expect((await decide(id, 'approve')).statusCode).toBe(200);
    expect((await orderRow(t, orderId)).payment_status).toBe('paid');
  });

  it('order cancelled: a pending review becomes cancelled (then nothing may decide it); a rejected one stays', async () => {
    const orderId = await directOrder();
    const id = (await proof(orderId)).json().id;
    const rejectedOrder = await directOrder();
    const rid = (await proof(rejectedOrder)).json().id;
    expect((await decide(rid, 'reject')).statusCode).toBe(200);
    // The merchant cancels both orders through commerce, which calls money.orderCancelled in that transaction.
    for (const o of [orderId, rejectedOrder]) await cancelOrder(o);
    expect((await reviewRow(orderId)).status).toBe('cancelled');
    expect((await reviewRow(rejectedOrder)).status).toBe('rejected');
    expect((await decide(id, 'approve')).json()).toMatchObject({ code: 'INVALID_TRANSITION', current_status: 'cancelled' });
  });

  it('another merchant cannot see or decide the review (404); administrators can decide', async () => {
    const orderId = await directOrder();
    const id = (await proof(orderId)).json().id;
    const u = await newUser(t, 'comercio');
    const s2 = await t.login(u.email);
    expect(
      (await t.req(admin, { method: 'POST', url: '/merchants', payload: { owner_user_id: u.userId, name: 'Other shop' } })).statusCode,
    ).toBe(201);
    expect((await decide(id, 'approve', s2)).statusCode).toBe(404);
    const list2 = await t.req(s2, { method: 'GET', url: '/merchant/payment-reviews' });
    expect(list2.json().data).toEqual([]);
    expect((await decide(id, 'approve', customer)).statusCode).toBe(403);
    const other = await t.newOrganization();
    expect((await decide(id, 'approve', await t.login(other.logins.admin))).statusCode).toBe(404);
    expect((await reviewRow(orderId)).status).toBe('pending');
    expect((await decide(id, 'reject', admin)).statusCode).toBe(200);
  });

  it('lists: the merchant his own, administrators all, filtered by status', async () => {
    const mine = await t.req(merchant, { method: 'GET', url: '/merchant/payment-reviews?status=pending&limit=200' });
    expect(mine.statusCode).toBe(200);
    const { rows } = await t.db.withSystem((tx) =>
      tx.query("SELECT id FROM merchant_payment_review WHERE merchant_id = $1 AND status = 'pending' ORDER BY id DESC", [m.id]),
    );
    expect(mine.json().data.map((r: { id: string }) => r.id)).toEqual(rows.map((r: { id: string }) => r.id));
    const all = await t.req(admin, { method: 'GET', url: '/admin/payment-reviews?limit=2' });
    expect(all.statusCode).toBe(200);
    expect(all.json().data).toHaveLength(2);
    expect(all.json().next_cursor).toBeTruthy();
    expect((await t.req(customer, { method: 'GET', url: '/admin/payment-reviews' })).statusCode).toBe(403);
  });
});

describe('end to end: a merchant_direct order paid with an uploaded proof', () => {
  const decide = (id: string, action: 'approve' | 'reject', notes = 'checked') =>
    t.req(merchant, { method: 'POST', url: `/merchant/payment-reviews/${id}/${action}`, payload: { notes } });
  const submit = async (orderId: string, objectId: string) =>
    proof(orderId, { amount: (await orderRow(t, orderId)).total, proof_storage_object_id: objectId });

  it('proof object → approve → paid; reject → failed → a new proof reopens the same review; cancelling the order cancels the review', async () => {
    // Approved: the order becomes paid, and the review keeps the uploaded object.
    const paidOrder = await directOrder();
    const first = await uploadObject(t, customer, 'payment_proof', png(4));
    const r1 = await submit(paidOrder, first);
    expect(r1.statusCode, r1.body).toBe(201);
    expect(r1.json()).toMatchObject({ order_id: paidOrder, proof_storage_object_id: first, status: 'pending' });
    expect(await orderRow(t, paidOrder)).toMatchObject({ payment_status: 'pending_review', payment_review_id: r1.json().id });
    // The merchant deciding the review may download the proof; another customer may not.
    expect((await t.req(merchant, { method: 'GET', url: `/storage/objects/${first}` })).statusCode).toBe(200);
    expect((await t.req((await newCustomer(t)).session, { method: 'GET', url: `/storage/objects/${first}` })).statusCode).toBe(404);
    expect(ok(await decide(r1.json().id, 'approve')).status).toBe('approved');
    expect(await orderRow(t, paidOrder)).toMatchObject({ payment_status: 'paid', payment_review_id: r1.json().id });

    // Rejected: failed; a new proof (a new upload) reopens the same review; then the order is cancelled.
    const orderId = await directOrder();
    const rid = ok(await submit(orderId, await uploadObject(t, customer, 'payment_proof', png(3))), 201).id;
    expect(ok(await decide(rid, 'reject', 'unreadable')).status).toBe('rejected');
    expect((await orderRow(t, orderId)).payment_status).toBe('failed');
    const second = await uploadObject(t, customer, 'payment_proof', png(5));
    const again = await submit(orderId, second);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ id: rid, status: 'pending', submissions: 2, proof_storage_object_id: second });
    expect((await orderRow(t, orderId)).payment_status).toBe('pending_review');
    expect(await cancelOrder(orderId)).toMatchObject({ status: 'cancelled' });
    expect(await reviewRow(orderId)).toMatchObject({ id: rid, status: 'cancelled' });
    expect((await decide(rid, 'approve')).json()).toMatchObject({ code: 'INVALID_TRANSITION', current_status: 'cancelled' });

    // An object of another purpose, or another user's proof, is refused.
    const avatar = await uploadObject(t, customer, 'avatar', png(2));
    const wrong = await submit(await directOrder(), avatar);
    expect(wrong.statusCode, wrong.body).toBe(422);
    const foreign = await uploadObject(t, (await newCustomer(t)).session, 'payment_proof', png(2));
    expect((await submit(await directOrder(), foreign)).statusCode).toBe(422);
  });
});

describe('sub-administrators', () => {
  /** The SPEC defaults: everything true except payments_review_decide. */
  const perms = (over: Partial<Record<PermissionKey, boolean>>) =>
    ({ ...Object.fromEntries(SUBADMIN_PERMISSION_KEYS.map((k) => [k, k !== 'payments_review_decide'])), ...over }) as Record<
      PermissionKey,
      boolean
    >;

  it('view with payments_review_view in their territories; decide only with payments_review_decide', async () => {
    const orderId = await directOrder();
    const id = (await proof(orderId)).json().id;
    // A branch far from every territory: its orders have no territory.
    const outside = await directOrder({ at: await newBranch(t, shop, { lon: -66.15, lat: -17.39 }) });
    expect((await orderRow(t, outside)).territory_id).toBeNull();
    const outsideId = ok(await proof(outside, { amount: (await orderRow(t, outside)).total, customer_reference: 'OUT-1' }), 201).id;
    const email = `sub-reviews-${Date.now()}@demo.test`;
    const created = await t.req(admin, {
      method: 'POST',
      url: '/admin/subadmins',
      payload: { email, password: DEMO_PASSWORD, display_name: 'sub', territory_ids: [m.territory_id!], permissions: perms({}) },
    });
    expect(created.statusCode, created.body).toBe(201);
    const setPermissions = async (permissions: Record<PermissionKey, boolean>) =>
      expect(
        (await t.req(admin, { method: 'PATCH', url: `/admin/subadmins/${created.json().user_id}`, payload: { permissions } })).statusCode,
      ).toBe(200);
    {
      const s = await t.login(email);
      const list = await t.req(s, { method: 'GET', url: '/admin/payment-reviews?limit=200' });
      expect(list.statusCode, list.body).toBe(200);
      const ids = list.json().data.map((r: { id: string }) => r.id);
      expect(ids).toContain(id);
      expect(ids).not.toContain(outsideId);
      const denied = await t.req(s, { method: 'POST', url: `/merchant/payment-reviews/${id}/approve` });
      expect(denied.statusCode).toBe(403);
      expect(denied.json().code).toBe('PERMISSION_DENIED');
      await setPermissions(perms({ payments_review_decide: true }));
      expect((await t.req(s, { method: 'POST', url: `/merchant/payment-reviews/${outsideId}/approve` })).statusCode).toBe(404);
      expect((await t.req(s, { method: 'POST', url: `/merchant/payment-reviews/${id}/approve` })).statusCode).toBe(200);
      await setPermissions(perms({ payments_review_view: false }));
      expect((await t.req(s, { method: 'GET', url: '/admin/payment-reviews' })).statusCode).toBe(403);
    }
  });
});

describe('dashboard', () => {
  it('counts pending reviews', async () => {
    const r = await t.req(admin, { method: 'GET', url: '/dashboard' });
    expect(r.statusCode).toBe(200);
    const n = (await t.db.withSystem((tx) => tx.query("SELECT count(*)::int AS n FROM merchant_payment_review WHERE status = 'pending'")))
      .rows[0].n;
    expect(r.json().sections.money.pending_payment_reviews).toBe(n);
    expect(n).toBeGreaterThan(0);
  });
});
