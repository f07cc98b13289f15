import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, pt, type Session, type TestApp } from '../helpers.js';
import { newSubadmin, newTerritory } from '../subadmin/fixtures.js';

let t: TestApp;
let admin: Session;
let dispatch: Session;

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.as('admin');
  dispatch = await t.as('dispatch');
});
afterAll(() => t?.close());

const WEEK = [1, 2, 3, 4, 5].map((day) => ({ day, open: '08:00', close: '18:00' }));
const body = (over: Record<string, unknown> = {}) => ({
  name: 'Depósito Central',
  address: 'Av. Camacho 1200',
  location: pt(-68.13, -16.5),
  opening_hours: WEEK,
  ...over,
});
const hubCount = async () => (await t.db.withSystem((tx) => tx.query<{ n: number }>('SELECT count(*)::int AS n FROM hub'))).rows[0].n;
const audits = async (id: string) =>
  (
    await t.db.withSystem((tx) =>
      tx.query<{ action: string }>("SELECT action FROM audit_log WHERE entity_type = 'hub' AND entity_id = $1 ORDER BY id", [id]),
    )
  ).rows.map((r) => r.action);

describe('hubs', () => {
  it('administrators create, read, list, change and delete a hub, each change audited; dispatch reads only', async () => {
    const created = await t.req(admin, { method: 'POST', url: '/hubs', payload: body() });
    expect(created.statusCode, created.body).toBe(201);
    const hub = created.json();
    expect(hub).toMatchObject({ name: 'Depósito Central', active: true, opening_hours: WEEK, location: pt(-68.13, -16.5) });
    expect(hub.territory_id).toBeTruthy();

    const list = await t.req(dispatch, { method: 'GET', url: '/hubs?limit=1' });
    expect(list.statusCode).toBe(200);
    expect(list.json().data.map((h: { id: string }) => h.id)).toEqual([hub.id]);
    expect((await t.req(dispatch, { method: 'GET', url: `/hubs/${hub.id}` })).json().name).toBe('Depósito Central');
    expect((await t.req(dispatch, { method: 'POST', url: '/hubs', payload: body() })).statusCode).toBe(403);
    expect((await t.req(dispatch, { method: 'PATCH', url: `/hubs/${hub.id}`, payload: { active: false } })).statusCode).toBe(403);
    expect((await t.req(dispatch, { method: 'DELETE', url: `/hubs/${hub.id}` })).statusCode).toBe(403);

    const changed = await t.req(admin, {
      method: 'PATCH',
      url: `/hubs/${hub.id}`,
      payload: { name: 'Depósito Sur', opening_hours: [{ day: 6, open: '09:00', close: '13:30' }], active: false },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({
      name: 'Depósito Sur',
      active: false,
      opening_hours: [{ day: 6, open: '09:00', close: '13:30' }],
    });
    expect((await t.req(admin, { method: 'GET', url: '/hubs?active=false' })).json().data.map((h: { id: string }) => h.id)).toContain(
      hub.id,
    );

    expect((await t.req(admin, { method: 'DELETE', url: `/hubs/${hub.id}` })).statusCode).toBe(204);
    expect((await t.req(admin, { method: 'GET', url: `/hubs/${hub.id}` })).statusCode).toBe(404);
    expect(await audits(hub.id)).toEqual(['hub.created', 'hub.updated', 'hub.deleted']);
  });

  it('refuses a hub outside every territory, hours that close before they open and absurd values, writing nothing', async () => {
    const before = await hubCount();
    const outside = await t.req(admin, { method: 'POST', url: '/hubs', payload: body({ location: pt(-60, -10) }) });
    expect(outside.statusCode).toBe(422);
    expect(outside.headers['content-type']).toContain('application/problem+json');
    expect(outside.json()).toMatchObject({ code: 'HUB_OUTSIDE_TERRITORY', errors: [{ field: 'location' }] });

    const backwards = await t.req(admin, {
      method: 'POST',
      url: '/hubs',
      payload: body({ opening_hours: [{ day: 1, open: '18:00', close: '08:00' }] }),
    });
    expect(backwards.statusCode).toBe(422);
    expect(backwards.json()).toMatchObject({ code: 'HUB_HOURS_INVALID', errors: [{ field: 'opening_hours[0].close' }] });
    const equal = await t.req(admin, {
      method: 'POST',
      url: '/hubs',
      payload: body({ opening_hours: [{ day: 1, open: '08:00', close: '08:00' }] }),
    });
    expect(equal.json().code).toBe('HUB_HOURS_INVALID');
    const twice = await t.req(admin, {
      method: 'POST',
      url: '/hubs',
      payload: body({
        opening_hours: [
          { day: 1, open: '08:00', close: '10:00' },
          { day: 1, open: '12:00', close: '14:00' },
        ],
      }),
    });
    expect(twice.json()).toMatchObject({ code: 'HUB_HOURS_INVALID', errors: [{ field: 'opening_hours[1].day' }] });

    for (const bad of [
      { opening_hours: [{ day: 7, open: '08:00', close: '10:00' }] },
      { opening_hours: [{ day: 1, open: '25:00', close: '26:00' }] },
      { opening_hours: [{ day: 1, open: '8', close: '10' }] },
      { location: pt(-200, -16.5) },
      { location: { type: 'Point', coordinates: [-68.13, 95] } },
      { name: '' },
      { name: 'x'.repeat(500) },
      { surprise: true },
    ]) {
      const res = await t.req(admin, { method: 'POST', url: '/hubs', payload: body(bad) });
      expect([400, 422], `${JSON.stringify(bad)}: ${res.body}`).toContain(res.statusCode);
    }
    const hub = (await t.req(admin, { method: 'POST', url: '/hubs', payload: body() })).json();
    const moved = await t.req(admin, { method: 'PATCH', url: `/hubs/${hub.id}`, payload: { location: pt(-60, -10) } });
    expect(moved.json().code).toBe('HUB_OUTSIDE_TERRITORY');
    expect((await t.req(admin, { method: 'GET', url: `/hubs/${hub.id}` })).json().location).toEqual(pt(-68.13, -16.5));
    expect((await t.req(admin, { method: 'PATCH', url: `/hubs/${hub.id}`, payload: {} })).statusCode).toBe(400);
    expect(await hubCount()).toBe(before + 1);
    expect(await audits(hub.id)).toEqual(['hub.created']);
  });

  it('confines a sub-administrator to the hubs of his territories', async () => {
    const north = await newTerritory(t, admin, 'Hub north', -65, -14);
    const south = await newTerritory(t, admin, 'Hub south', -65, -15);
    const inNorth = (await t.req(admin, { method: 'POST', url: '/hubs', payload: body({ location: pt(-65, -14) }) })).json();
    const inSouth = (await t.req(admin, { method: 'POST', url: '/hubs', payload: body({ location: pt(-65, -15) }) })).json();
    expect([inNorth.territory_id, inSouth.territory_id]).toEqual([north, south]);
    const sub = (await newSubadmin(t, admin, { territory_ids: [north] })).session;

    const seen = (await t.req(sub, { method: 'GET', url: '/hubs' })).json().data.map((h: { id: string }) => h.id);
    expect(seen).toContain(inNorth.id);
    expect(seen).not.toContain(inSouth.id);
    expect((await t.req(sub, { method: 'GET', url: `/hubs?territory_id=${south}` })).json().data).toEqual([]);
    expect((await t.req(sub, { method: 'GET', url: `/hubs/${inSouth.id}` })).statusCode).toBe(404);
    expect((await t.req(sub, { method: 'PATCH', url: `/hubs/${inSouth.id}`, payload: { name: 'Mine' } })).statusCode).toBe(404);
    expect((await t.req(sub, { method: 'DELETE', url: `/hubs/${inSouth.id}` })).statusCode).toBe(404);
    expect((await t.req(admin, { method: 'GET', url: `/hubs/${inSouth.id}` })).json().name).toBe('Depósito Central');

    const before = await hubCount();
    const placedSouth = await t.req(sub, { method: 'POST', url: '/hubs', payload: body({ location: pt(-65, -15) }) });
    expect(placedSouth.statusCode).toBe(422);
    expect(placedSouth.json().code).toBe('HUB_OUTSIDE_TERRITORY');
    const movedSouth = await t.req(sub, { method: 'PATCH', url: `/hubs/${inNorth.id}`, payload: { location: pt(-65, -15) } });
    expect(movedSouth.json().code).toBe('HUB_OUTSIDE_TERRITORY');
    expect(await hubCount()).toBe(before);
    const own = await t.req(sub, { method: 'POST', url: '/hubs', payload: body({ location: pt(-65.01, -14) }) });
    expect(own.statusCode, own.body).toBe(201);
    expect(own.json().territory_id).toBe(north);
  });

  it('keeps each organization to its own hubs', async () => {
    const hub = (await t.req(admin, { method: 'POST', url: '/hubs', payload: body() })).json();
    const other = await t.newOrganization('Hub Other Org');
    const otherAdmin = await t.login(other.logins.admin, undefined, other.organizationId);
    expect((await t.req(otherAdmin, { method: 'GET', url: `/hubs/${hub.id}` })).statusCode).toBe(404);
    expect((await t.req(otherAdmin, { method: 'GET', url: '/hubs' })).json().data).toEqual([]);
  });
});
