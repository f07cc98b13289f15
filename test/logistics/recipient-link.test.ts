import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import { newExpress, newShop, ok, rows, type Shop } from '../commerce/fixtures.js';
import { newDriver, newTrip, pt, tripDb, type TestDriver } from './fixtures.js';
import { PUBLIC_TRACKING_PER_MINUTE, PUBLIC_TRACKING_UNKNOWN_PER_MINUTE } from '../../src/modules/logistics/routes/recipient-links.js';

let t: TestApp;
let admin: Session;
let shop: Shop;
let d: TestDriver;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  shop = await newShop(t);
  d = await newDriver(t, { lon: -68.131, lat: -16.501 }, { capacity: 5 });
});
afterAll(() => t?.close());

const express = (phone = '+59170000001') => newExpress(t, shop, { customer_phone: phone });
const linkOf = async (tripId: string, s: Session = shop.merchant) => t.req(s, { method: 'GET', url: `/trips/${tripId}/recipient-link` });
/** The recipient opens his link: no token, no session. */
const open = (url: string) => t.app.inject({ method: 'GET', url: url.replace(/^https?:\/\/[^/]+/, '') });

describe('recipient tracking link', () => {
  it('an express recipient gets a link with the status and the delivery PIN, sent to his phone through the chat outbox', async () => {
    ok(
      await t.req(shop.merchant, {
        method: 'PATCH',
        url: '/merchant/channels',
        payload: { chat_enabled: true, chat_phone: '+59171111111' },
      }),
    );
    const req = await express('+59170000001');
    const link = ok(await linkOf(req.trip_id));
    expect(link).toMatchObject({ trip_id: req.trip_id, recipient_phone: '+59170000001', expires_at: null, revoked_at: null });
    expect(link.url).toMatch(/^\/api\/v1\/public\/tracking\/[A-Za-z0-9_.-]{60,}$/);

    const res = await open(link.url);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const trip = await tripDb(t, req.trip_id);
    expect(res.json()).toMatchObject({
      trip_id: req.trip_id,
      status: 'pending',
      delivery_pin: trip.delivery_pin,
      driver_location: null,
      dropoff_address: 'Calle 2',
      organization_name: 'Demo Logistics',
    });
    expect(res.json().pickup_pin).toBeUndefined();

    // The recipient messages' order confirmation carries the link.
    const queued = await rows(
      t,
      "SELECT destination_phone, payload FROM chat_order_outbox WHERE express_request_id = $1 AND message_type = 'recipient_order_confirmed'",
      [req.id],
    );
    expect(queued).toHaveLength(1);
    expect(queued[0].destination_phone).toBe('+59170000001');
    expect(queued[0].payload.url).toBe(link.url);
    expect(queued[0].payload.summary).toContain(link.url);
  });

  it('shows the driver while the trip is active, hides the PIN and the driver after it ends, and expires some hours later', async () => {
    const req = await express();
    const { url } = ok(await linkOf(req.trip_id));
    ok(await t.req(admin, { method: 'POST', url: `/trips/${req.trip_id}/assign`, payload: { driver_id: d.id } }));
    ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${req.trip_id}/accept` }));
    ok(await t.req(d.session, { method: 'POST', url: '/driver/location', payload: { location: pt(-68.125, -16.505) } }));
    const live = (await open(url)).json();
    expect(live).toMatchObject({ status: 'accepted', driver_location: pt(-68.125, -16.505), next_stop: 'pickup' });
    expect(live.eta_seconds).toBeGreaterThan(0);

    const row = await tripDb(t, req.trip_id);
    ok(await t.req(d.session, { method: 'POST', url: `/trips/${req.trip_id}/verify-pickup`, payload: { pin: row.pickup_pin } }));
    ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${req.trip_id}/start-delivery` }));
    ok(await t.req(d.session, { method: 'POST', url: `/trips/${req.trip_id}/verify-delivery`, payload: { pin: row.delivery_pin } }));
    const done = (await open(url)).json();
    expect(done).toMatchObject({ status: 'completed', delivery_pin: null, driver_location: null });
    expect(new Date(done.expires_at).getTime()).toBeGreaterThan(Date.now() + 5 * 3600_000);

    await t.db.withSystem((tx) => tx.query("UPDATE trip SET completed_at = now() - interval '7 hours' WHERE id = $1", [req.trip_id]));
    expect((await open(url)).statusCode).toBe(404);
  });

  it('a forged, revoked or replaced link is 404, all alike', async () => {
    const req = await express();
    const { url } = ok(await linkOf(req.trip_id));
    const forged = url.slice(0, -2) + (url.endsWith('AA') ? 'BB' : 'AA');
    const unknown = await open(forged);
    expect(unknown.statusCode).toBe(404);
    expect((await open('/api/v1/public/tracking/not-a-token-at-all-xxxxxxxx')).statusCode).toBe(404);

    // Creating next to a live link keeps it: the link already sent goes on working.
    const kept = ok(await t.req(shop.merchant, { method: 'POST', url: `/trips/${req.trip_id}/recipient-link`, payload: {} }), 200);
    expect(kept.url).toBe(url);
    expect((await open(url)).statusCode).toBe(200);
    // Only an explicit reissue replaces it.
    const fresh = ok(
      await t.req(shop.merchant, { method: 'POST', url: `/trips/${req.trip_id}/recipient-link`, payload: { reissue: true } }),
      201,
    );
    expect(fresh.url).not.toBe(url);
    expect((await open(url)).statusCode).toBe(404);
    expect((await open(fresh.url)).statusCode).toBe(200);

    expect((await t.req(admin, { method: 'DELETE', url: `/trips/${req.trip_id}/recipient-link` })).statusCode).toBe(204);
    expect((await open(fresh.url)).json()).toMatchObject({ code: 'NOT_FOUND' });
    expect((await linkOf(req.trip_id)).statusCode).toBe(404);
    expect((await t.req(admin, { method: 'DELETE', url: `/trips/${req.trip_id}/recipient-link` })).statusCode).toBe(404);
    const audit = await rows(
      t,
      "SELECT action FROM audit_log WHERE entity_id = $1 AND action LIKE 'trip.recipient_link%' ORDER BY created_at",
      [req.trip_id],
    );
    expect(audit.map((a) => a.action)).toEqual([
      'trip.recipient_link_issued',
      'trip.recipient_link_reissued',
      'trip.recipient_link_revoked',
    ]);
  });

  it('creating next to a live link with another phone keeps the link and moves the messages to the new phone; bad input changes nothing', async () => {
    const req = await express('+59170000002');
    const before = ok(await linkOf(req.trip_id));
    const moved = ok(
      await t.req(shop.merchant, {
        method: 'POST',
        url: `/trips/${req.trip_id}/recipient-link`,
        payload: { recipient_phone: '+59170000003' },
      }),
      200,
    );
    expect(moved).toMatchObject({ id: before.id, url: before.url, recipient_phone: '+59170000003' });
    expect((await open(before.url)).statusCode).toBe(200);
    const bad = await t.req(shop.merchant, { method: 'POST', url: `/trips/${req.trip_id}/recipient-link`, payload: { reissue: 'yes' } });
    expect(bad.statusCode).toBe(400);
    expect(ok(await linkOf(req.trip_id))).toMatchObject({ id: before.id, recipient_phone: '+59170000003' });
    const audit = await rows(
      t,
      "SELECT action FROM audit_log WHERE entity_id = $1 AND action LIKE 'trip.recipient_link%' ORDER BY created_at",
      [req.trip_id],
    );
    expect(audit.map((a) => a.action)).toEqual(['trip.recipient_link_issued', 'trip.recipient_link_phone_changed']);
  });

  it('a link issued before keys were derived per purpose (MAC under the raw secret) keeps working; its MAC opens no other link', async () => {
    const req = await express();
    const current = ok(await linkOf(req.trip_id));
    // The link as it was stored and sent before: no token_version, MAC under JWT_SECRET itself.
    await t.db.withSystem((tx) => tx.query('UPDATE trip_recipient_link SET token_version = NULL WHERE id = $1', [current.id]));
    const org = t.demo.organizationId;
    const mac = createHmac('sha256', 'test-secret-test-secret-test-secret-0123')
      .update(`recipient-link:${org}:${current.id}`)
      .digest('base64url')
      .slice(0, 24);
    const legacyUrl = `/api/v1/public/tracking/${org.replace(/-/g, '')}.${current.id.replace(/-/g, '')}.${mac}`;
    expect((await open(legacyUrl)).statusCode).toBe(200);
    // Shown again to staff as the address that was sent.
    expect(ok(await linkOf(req.trip_id)).url).toBe(legacyUrl);
    // The derived-key MAC does not open a legacy row, nor a legacy MAC a new row.
    expect((await open(current.url)).statusCode).toBe(404);
    const other = await express();
    const otherLink = ok(await linkOf(other.trip_id));
    const legacyOther = createHmac('sha256', 'test-secret-test-secret-test-secret-0123')
      .update(`recipient-link:${org}:${otherLink.id}`)
      .digest('base64url')
      .slice(0, 24);
    expect((await open(otherLink.url.replace(/[^.]+$/, legacyOther))).statusCode).toBe(404);
    expect((await open(otherLink.url)).statusCode).toBe(200);
  });

  it('a customer with an account follows the trip in the app: no link; strangers and other roles get nothing', async () => {
    const customer = await t.as('customer');
    const trip = await newTrip(t, shop.merchant, { customer_user_id: customer.userId });
    expect((await linkOf(trip.id)).statusCode).toBe(404);
    const issue = await t.req(shop.merchant, { method: 'POST', url: `/trips/${trip.id}/recipient-link` });
    expect(issue.statusCode).toBe(422);
    expect(issue.json().code).toBe('RECIPIENT_HAS_ACCOUNT');

    const req = await express();
    expect((await linkOf(req.trip_id, customer)).statusCode).toBe(403);
    expect((await linkOf(req.trip_id, d.session)).statusCode).toBe(403);
    const other = await t.newOrganization();
    expect((await linkOf(req.trip_id, await t.login(other.logins.admin!))).statusCode).toBe(404);
    const otherShop = await newShop(t);
    expect((await linkOf(req.trip_id, otherShop.merchant)).statusCode).toBe(404);
  });

  it('is rate limited per link, whatever address polls it, and not per address for links we issued', async () => {
    const req = await express();
    const { url } = ok(await linkOf(req.trip_id));
    const from = (ip: string, u = url) => t.app.inject({ method: 'GET', url: u.replace(/^https?:\/\/[^/]+/, ''), remoteAddress: ip });
    const codes: number[] = [];
    // The link's budget is one, spent from two addresses (the recipient's phone on Wi-Fi, then on mobile data).
    for (let i = 0; i < PUBLIC_TRACKING_PER_MINUTE; i++) codes.push((await from(i % 2 ? '203.0.113.9' : '203.0.113.10')).statusCode);
    expect(codes.every((c) => c === 200)).toBe(true);
    const limited = await from('203.0.113.11');
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe('RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another recipient behind the same address (a carrier's NAT) is not refused.
    const other = ok(await linkOf((await express('+59170000002')).trip_id));
    expect((await from('203.0.113.9', other.url)).statusCode).toBe(200);
  });

  it('recipients behind one address each poll their own link without refusing one another', async () => {
    const urls = await Promise.all([0, 1, 2].map(async (i) => ok(await linkOf((await express(`+5917000010${i}`)).trip_id)).url as string));
    const nat = (u: string) => t.app.inject({ method: 'GET', url: u.replace(/^https?:\/\/[^/]+/, ''), remoteAddress: '198.51.100.7' });
    // Together more than one address's old budget (PUBLIC_TRACKING_PER_MINUTE), each well within its link's.
    const polls = Math.ceil((PUBLIC_TRACKING_PER_MINUTE + 10) / urls.length);
    const codes: number[] = [];
    for (let i = 0; i < polls; i++) for (const u of urls) codes.push((await nat(u)).statusCode);
    expect(codes.filter((c) => c !== 200)).toEqual([]);
  });

  it('refuses forged or garbled links from one address beyond their own limit, without touching the links it issued', async () => {
    const { url } = ok(await linkOf((await express()).trip_id));
    const forged = url.replace(/.$/, (c: string) => (c === 'A' ? 'B' : 'A'));
    const from = (ip: string, u: string) => t.app.inject({ method: 'GET', url: u.replace(/^https?:\/\/[^/]+/, ''), remoteAddress: ip });
    const codes: number[] = [];
    for (let i = 0; i < PUBLIC_TRACKING_UNKNOWN_PER_MINUTE; i++) codes.push((await from('192.0.2.44', forged)).statusCode);
    expect(codes.every((c) => c === 404)).toBe(true);
    const limited = await from('192.0.2.44', forged);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe('RATE_LIMITED');
    expect((await from('192.0.2.44', url)).statusCode).toBe(200);
    expect((await from('192.0.2.45', forged)).statusCode).toBe(404);
  });
});
