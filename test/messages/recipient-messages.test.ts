import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, secondInstance, waitFor, type Session, type TestApp } from '../helpers.js';
import { newShop, ok, rows, type Shop } from '../commerce/fixtures.js';
import { newDriver, newTrip, pt, tripDb, type TestDriver } from '../logistics/fixtures.js';
import type { MessagesService } from '../../src/modules/messages/index.js';
import type { Database } from '../../src/platform/db/index.js';
import { DEMO_PASSWORD } from '../../src/seed.js';

/** What a trip's recipient is told, through HTTP: queued once per trigger, in his language, opt-out respected, ETA throttled, templates checked. */
let t: TestApp;
let admin: Session;
let shop: Shop;
let d: TestDriver;
let phoneSeq = 100;
const nextPhone = () => `+591700${String(phoneSeq++).padStart(5, '0')}`;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  shop = await newShop(t);
  d = await newDriver(t, { lon: -68.131, lat: -16.501 }, { capacity: 10 });
  ok(
    await t.req(shop.merchant, { method: 'PATCH', url: '/merchant/channels', payload: { chat_enabled: true, chat_phone: '+59171111111' } }),
  );
});
afterAll(() => t?.close());

const express = async (phone: string, name = 'Ana') =>
  ok(
    await t.req(shop.merchant, {
      method: 'POST',
      url: '/merchant/delivery-express',
      payload: {
        branch_id: shop.branchId,
        customer_name: name,
        customer_phone: phone,
        dropoff_address: 'Calle 2',
        dropoff_location: pt(-68.12, -16.51),
      },
    }),
    201,
  );
/** The recipient messages queued in the chat outbox for a trip, oldest first. */
const queued = (tripId: string) =>
  rows(
    t,
    "SELECT message_type, destination_phone, payload FROM chat_order_outbox WHERE payload->>'trip_id' = $1 AND message_type LIKE 'recipient\\_%' ORDER BY created_at, id",
    [tripId],
  );
const types = async (tripId: string) => (await queued(tripId)).map((r) => r.message_type);
const drive = async (tripId: string, to: 'assigned' | 'in_transit' | 'completed') => {
  ok(await t.req(admin, { method: 'POST', url: `/trips/${tripId}/assign`, payload: { driver_id: d.id } }));
  if (to === 'assigned') return;
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/accept` }));
  const row = await tripDb(t, tripId);
  ok(await t.req(d.session, { method: 'POST', url: `/trips/${tripId}/verify-pickup`, payload: { pin: row.pickup_pin } }));
  ok(await t.req(d.session, { method: 'POST', url: `/driver/trips/${tripId}/start-delivery` }));
  if (to === 'in_transit') return;
  ok(await t.req(d.session, { method: 'POST', url: `/trips/${tripId}/verify-delivery`, payload: { pin: row.delivery_pin } }));
};

describe('recipient messages', () => {
  it('queues each message once per trigger, with the tracking link, in Spanish by default', async () => {
    const phone = nextPhone();
    const req = await express(phone, 'Ana');
    const link = ok(await t.req(shop.merchant, { method: 'GET', url: `/trips/${req.trip_id}/recipient-link` }));
    expect(await types(req.trip_id)).toEqual(['recipient_order_confirmed']);
    const [confirmed] = await queued(req.trip_id);
    expect(confirmed.destination_phone).toBe(phone);
    expect(confirmed.payload.summary).toMatch(/^Hola Ana, Shop \w+ confirmó tu pedido\. Síguelo aquí: /);
    expect(confirmed.payload.summary).toContain(link.url);
    expect(confirmed.payload.url).toBe(link.url);

    await drive(req.trip_id, 'assigned');
    // Unassigned and assigned again: the recipient is not told twice.
    ok(await t.req(admin, { method: 'POST', url: `/trips/${req.trip_id}/status`, payload: { status: 'pending', reason: 'reassign' } }));
    await drive(req.trip_id, 'completed');
    expect(await types(req.trip_id)).toEqual(['recipient_order_confirmed', 'recipient_driver_assigned', 'recipient_delivered']);
    // Reissuing the link sends no second confirmation.
    const sent = await rows(t, 'SELECT kind, channel, language FROM recipient_message WHERE subject_id = $1 ORDER BY created_at', [
      req.trip_id,
    ]);
    expect(sent).toEqual([
      { kind: 'order_confirmed', channel: 'chat', language: 'es' },
      { kind: 'driver_assigned', channel: 'chat', language: 'es' },
      { kind: 'delivered', channel: 'chat', language: 'es' },
    ]);
  });

  it('a failed delivery tells the recipient once', async () => {
    const req = await express(nextPhone());
    await drive(req.trip_id, 'in_transit');
    ok(
      await t.req(d.session, {
        method: 'POST',
        url: `/driver/trips/${req.trip_id}/fail-delivery`,
        payload: { reason: 'recipient_absent' },
      }),
    );
    const msgs = await queued(req.trip_id);
    expect(msgs.map((m) => m.message_type)).toEqual(['recipient_order_confirmed', 'recipient_driver_assigned', 'recipient_failed']);
    expect(msgs[2].payload.summary).toMatch(/^No pudimos entregar tu pedido de Shop \w+\./);
  });

  it('speaks the language chosen for the phone (staff) and stops for a phone that opted out (staff or the recipient from his link)', async () => {
    const english = nextPhone();
    const pref = ok(
      await t.req(admin, { method: 'PUT', url: '/recipient-messages/preferences', payload: { phone: english, language: 'en' } }),
    );
    expect(pref).toMatchObject({ phone: english, language: 'en', opted_out: false, changed_by: 'staff' });
    const en = await express(english, 'Ann');
    expect((await queued(en.trip_id))[0].payload.summary).toMatch(/^Hi Ann, Shop \w+ confirmed your order\. Follow it here: /);

    // Staff opt a phone out: nothing at all is queued for it.
    const silent = nextPhone();
    ok(await t.req(admin, { method: 'PUT', url: '/recipient-messages/preferences', payload: { phone: silent, opted_out: true } }));
    const s = await express(silent);
    await drive(s.trip_id, 'assigned');
    expect(await types(s.trip_id)).toEqual([]);

    // The recipient opts out from his tracking link: the next message is not queued.
    const own = nextPhone();
    const r = await express(own);
    const link = ok(await t.req(shop.merchant, { method: 'GET', url: `/trips/${r.trip_id}/recipient-link` }));
    const token = link.url.split('/').pop();
    const res = await t.app.inject({ method: 'PUT', url: `/api/v1/public/tracking/${token}/preferences`, payload: { opted_out: true } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ opted_out: true, language: null });
    await drive(r.trip_id, 'assigned');
    expect(await types(r.trip_id)).toEqual(['recipient_order_confirmed']);
    const listed = ok(await t.req(admin, { method: 'GET', url: '/recipient-messages/preferences?opted_out=true' }));
    expect(listed.data.map((p: { phone: string }) => p.phone)).toEqual(expect.arrayContaining([silent, own]));
    expect(listed.data.find((p: { phone: string }) => p.phone === own).changed_by).toBe('recipient');

    // A forged link changes nothing.
    const forged = await t.app.inject({
      method: 'PUT',
      url: `/api/v1/public/tracking/${token.slice(0, -2)}xx/preferences`,
      payload: { opted_out: false },
    });
    expect(forged.statusCode).toBe(404);
    expect((await rows(t, 'SELECT opted_out_at FROM recipient_preference WHERE phone = $1', [own]))[0].opted_out_at).not.toBeNull();
  });

  it('a customer with an account gets the messages as inbox notifications with push, once', async () => {
    const customer = await t.as('customer');
    const trip = await newTrip(t, shop.merchant, { customer_user_id: customer.userId });
    await drive(trip.id, 'assigned');
    ok(await t.req(admin, { method: 'POST', url: `/trips/${trip.id}/status`, payload: { status: 'pending', reason: 'reassign' } }));
    await drive(trip.id, 'assigned');
    const inbox = await rows(t, "SELECT type, body FROM notification WHERE user_id = $1 AND entity_id = $2 AND type LIKE 'recipient.%'", [
      customer.userId,
      trip.id,
    ]);
    expect(inbox).toHaveLength(1);
    expect(inbox[0].type).toBe('recipient.driver_assigned');
    expect(inbox[0].body).toMatch(/^Hola, un repartidor ya lleva tu pedido de Shop \w+\./);
    expect(await types(trip.id)).toEqual([]);
  });

  it('a customer with an account chooses for his phone: told in English, then nothing once he opted out; without a phone he is asked for one', async () => {
    const phone = nextPhone();
    const email = `cust-${phone.slice(-5)}@test.test`;
    const user = await t.db.withSystem((tx) =>
      t.app.services.identity.insertUser(tx, t.demo.organizationId, {
        email,
        password: DEMO_PASSWORD,
        display_name: 'Cliente',
        role: 'delivery',
        phone,
      }),
    );
    const customer = await t.login(email);
    const url = '/customer/message-preferences';
    expect(ok(await t.req(customer, { method: 'GET', url }))).toEqual({ phone, opted_out: false, language: null });
    expect(ok(await t.req(customer, { method: 'PUT', url, payload: { language: 'en' } }))).toEqual({
      phone,
      opted_out: false,
      language: 'en',
    });
    const told = async () =>
      rows(t, "SELECT type, body FROM notification WHERE user_id = $1 AND type LIKE 'recipient.%' ORDER BY created_at", [user.id]);
    const first = await newTrip(t, shop.merchant, { customer_user_id: user.id });
    await drive(first.id, 'assigned');
    expect((await told()).map((n) => n.body)).toEqual([expect.stringMatching(/^Hi, a driver is taking your order from Shop \w+\./)]);
    expect(ok(await t.req(customer, { method: 'PUT', url, payload: { opted_out: true } }))).toEqual({
      phone,
      opted_out: true,
      language: 'en',
    });
    const second = await newTrip(t, shop.merchant, { customer_user_id: user.id });
    await drive(second.id, 'assigned');
    expect(await told()).toHaveLength(1);
    // The same phone's preference, as staff see it.
    const listed = ok(await t.req(admin, { method: 'GET', url: '/recipient-messages/preferences?opted_out=true&limit=100' })).data as {
      phone: string;
    }[];
    expect(listed.map((p) => p.phone)).toContain(phone);
    // Bad input and the wrong caller change nothing.
    expect((await t.req(customer, { method: 'PUT', url, payload: { language: 'fr' } })).statusCode).toBe(400);
    expect((await t.req(admin, { method: 'PUT', url, payload: { opted_out: false } })).statusCode).toBe(403);
    const noPhone = await t.as('customer');
    expect(ok(await t.req(noPhone, { method: 'GET', url }))).toEqual({ phone: null, opted_out: false, language: null });
    const refused = await t.req(noPhone, { method: 'PUT', url, payload: { opted_out: true } });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().code).toBe('NO_RECIPIENT_PHONE');
    expect(ok(await t.req(customer, { method: 'GET', url }))).toEqual({ phone, opted_out: true, language: 'en' });
  });

  it('sends "arriving soon" when the ETA falls under the setting, at most once per trip and period', async () => {
    ok(
      await t.req(admin, {
        method: 'PATCH',
        url: '/recipient-messages/settings',
        payload: { arriving_soon_min: 10, eta_message_period_min: 30 },
      }),
    );
    const req = await express(nextPhone());
    await drive(req.trip_id, 'in_transit');
    const eta = (min: number) =>
      t.db.withTenant({ organizationId: t.demo.organizationId, userId: null }, (tx) =>
        t.app.services.messages.etaUpdated(tx, {
          tripId: req.trip_id,
          organizationId: t.demo.organizationId,
          etaDropoffAt: new Date(Date.now() + min * 60_000),
        }),
      );
    await eta(25); // not yet
    await eta(8);
    await eta(6);
    await eta(3);
    const arriving = (await queued(req.trip_id)).filter((m) => m.message_type === 'recipient_arriving_soon');
    expect(arriving).toHaveLength(1);
    expect(arriving[0].payload.summary).toMatch(/^Tu pedido de Shop \w+ llega en unos 8 min \(hacia las \d\d:\d\d\)\. /);
    // A period later, the next one may go.
    await t.db.withSystem((tx) =>
      tx.query("UPDATE recipient_message SET created_at = now() - interval '31 minutes' WHERE subject_id = $1 AND kind = 'arriving_soon'", [
        req.trip_id,
      ]),
    );
    await eta(2);
    expect((await queued(req.trip_id)).filter((m) => m.message_type === 'recipient_arriving_soon')).toHaveLength(2);
  });

  it('the driver\'s GPS near the drop-off brings "arriving soon" through the ETA hook, once however many fixes follow', async () => {
    const req = await express(nextPhone());
    await drive(req.trip_id, 'in_transit');
    for (const [lon, lat] of [
      [-68.1205, -16.5095],
      [-68.1202, -16.5098],
      [-68.1201, -16.5099],
    ]) {
      ok(await t.req(d.session, { method: 'POST', url: '/driver/location', payload: { location: pt(lon!, lat!) } }));
    }
    const trip = ok(await t.req(admin, { method: 'GET', url: `/trips/${req.trip_id}` }));
    expect(trip.eta_dropoff_at).not.toBeNull();
    const arriving = (await queued(req.trip_id)).filter((m) => m.message_type === 'recipient_arriving_soon');
    expect(arriving).toHaveLength(1);
    expect(arriving[0].payload.summary).toMatch(/^Tu pedido de Shop \w+ llega en unos \d+ min/);
  });

  it('templates: administrators edit them, an unknown placeholder is a 400 and nothing is written, previews render sample values', async () => {
    const before = ok(await t.req(admin, { method: 'GET', url: '/recipient-messages/settings' }));
    expect(before.templates).toHaveLength(10);
    expect(before.placeholders).toContain('tracking_link');

    const bad = await t.req(admin, {
      method: 'PATCH',
      url: '/recipient-messages/settings',
      payload: {
        arriving_soon_min: 5,
        templates: [{ kind: 'delivered', language: 'es', body: 'Entregado a {nombre} por {merchant_name}' }],
      },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('UNKNOWN_PLACEHOLDER');
    expect(bad.json().errors[0]).toMatchObject({ field: 'templates/0/body' });
    expect(bad.json().errors[0].message).toContain('{nombre}');
    expect(ok(await t.req(admin, { method: 'GET', url: '/recipient-messages/settings' }))).toEqual(before);

    const dispatch = await t.as('dispatch');
    expect(
      (await t.req(dispatch, { method: 'PATCH', url: '/recipient-messages/settings', payload: { arriving_soon_min: 5 } })).statusCode,
    ).toBe(403);

    const after = ok(
      await t.req(admin, {
        method: 'PATCH',
        url: '/recipient-messages/settings',
        payload: { templates: [{ kind: 'delivered', language: 'es', body: '{recipient_name}: entregado por {merchant_name}.' }] },
      }),
    );
    expect(after.templates.find((x: { kind: string; language: string }) => x.kind === 'delivered' && x.language === 'es')).toMatchObject({
      customized: true,
    });
    const audit = await rows(t, "SELECT action FROM audit_log WHERE action = 'recipient_messages.settings_updated'", []);
    expect(audit.length).toBeGreaterThan(0);

    const preview = ok(
      await t.req(dispatch, { method: 'POST', url: '/recipient-messages/preview', payload: { kind: 'delivered', language: 'es' } }),
    );
    expect(preview.text).toBe('Ana: entregado por Tienda Ejemplo.');
    const typed = ok(
      await t.req(admin, {
        method: 'POST',
        url: '/recipient-messages/preview',
        payload: { kind: 'arriving_soon', language: 'en', body: 'Around {eta_time}: {tracking_link}' },
      }),
    );
    expect(typed.text).toMatch(/^Around \d\d:\d\d: .*\/api\/v1\/public\/tracking\//);
    const badPreview = await t.req(admin, {
      method: 'POST',
      url: '/recipient-messages/preview',
      payload: { kind: 'delivered', language: 'es', body: 'Hola {who}' },
    });
    expect(badPreview.statusCode).toBe(400);
    expect(badPreview.json().code).toBe('UNKNOWN_PLACEHOLDER');

    // The edited template is what the next recipient gets; null puts the built-in one back.
    const req = await express(nextPhone(), 'Eva');
    await drive(req.trip_id, 'completed');
    expect((await queued(req.trip_id)).at(-1).payload.summary).toMatch(/^Eva: entregado por Shop \w+\.$/);
    const reset = ok(
      await t.req(admin, {
        method: 'PATCH',
        url: '/recipient-messages/settings',
        payload: { templates: [{ kind: 'delivered', language: 'es', body: null }] },
      }),
    );
    expect(reset.templates.find((x: { kind: string; language: string }) => x.kind === 'delivered' && x.language === 'es').customized).toBe(
      false,
    );
  });
});

describe('a settings change is followed by the very next message', () => {
  const settings = (payload: Record<string, unknown>) =>
    t.req(admin, { method: 'PATCH', url: '/recipient-messages/settings', payload }).then((r) => ok(r));
  /** The "arriving soon" rows of a trip after an ETA update `min` minutes away, through the given instance. */
  const etaIn = async (
    tripId: string,
    min: number,
    on: { db: Database; messages: MessagesService } = { db: t.db, messages: t.app.services.messages },
  ) => {
    await on.db.withTenant({ organizationId: t.demo.organizationId, userId: null }, (tx) =>
      on.messages.etaUpdated(tx, { tripId, organizationId: t.demo.organizationId, etaDropoffAt: new Date(Date.now() + min * 60_000) }),
    );
    return (await queued(tripId)).filter((m) => m.message_type === 'recipient_arriving_soon').length;
  };

  it('an edited template and a new "arriving soon" threshold apply to the next message', async () => {
    const first = await express(nextPhone(), 'Ivo'); // its confirmation read the settings
    await settings({ templates: [{ kind: 'driver_assigned', language: 'es', body: 'v1 {recipient_name}' }] });
    await drive(first.trip_id, 'assigned');
    expect((await queued(first.trip_id)).at(-1).payload.summary).toBe('v1 Ivo');
    const second = await express(nextPhone(), 'Ivo');
    await settings({ templates: [{ kind: 'driver_assigned', language: 'es', body: 'v2 {recipient_name}' }] });
    await drive(second.trip_id, 'assigned');
    expect((await queued(second.trip_id)).at(-1).payload.summary).toBe('v2 Ivo');
    await settings({ templates: [{ kind: 'driver_assigned', language: 'es', body: null }] });

    await settings({ arriving_soon_min: 5, eta_message_period_min: 30 });
    const third = await express(nextPhone());
    expect(await etaIn(third.trip_id, 8)).toBe(0);
    await settings({ arriving_soon_min: 10 });
    expect(await etaIn(third.trip_id, 8)).toBe(1);
  });

  it('a threshold changed through one instance is followed by the next ETA update on another', async () => {
    const b = await secondInstance(t);
    try {
      const onB = { db: b.app.ctx.db, messages: b.app.services.messages };
      // The second instance's listener is in place once a change through the first reaches it.
      let min = 20;
      await waitFor(
        async () => {
          const trip = (await express(nextPhone())).trip_id;
          min++;
          expect(await etaIn(trip, min - 0.5, onB)).toBe(0); // the current threshold is under min - 0.5
          await settings({ arriving_soon_min: min });
          return waitFor(async () => (await etaIn(trip, min - 0.5, onB)) === 1, { timeout: 1_000 }).catch(() => false);
        },
        { message: "the second instance's listener" },
      );
      const trip = (await express(nextPhone())).trip_id;
      expect(await etaIn(trip, 59.5, onB)).toBe(0); // remembered on the second instance
      await settings({ arriving_soon_min: 60 });
      await waitFor(async () => (await etaIn(trip, 59.5, onB)) === 1, { message: 'the message through the second instance' });
      await settings({ arriving_soon_min: 10 });
    } finally {
      await b.close();
    }
  });
});
