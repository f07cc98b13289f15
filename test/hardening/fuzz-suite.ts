import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers.js';
import { fuzzAll, fuzzEdges } from './fuzz.js';
import { buildWorld, demoLogins, sessionsOf, type World } from './world.js';

/** The fuzz suite; FUZZ_RUNS sets the generated cases per role (test/hardening: small, `npm run fuzz`: 2000). */
export function fuzzSuite(defaultRuns: number) {
  const runs = Number(process.env.FUZZ_RUNS ?? defaultRuns);
  const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
  const timeout = Math.max(120_000, runs * 200);
  let t: TestApp;
  let w: World;
  let ids: string[];

  beforeAll(async () => {
    t = await createTestApp({
      raw: { PARTNER_PAY_WEBHOOK_SECRET: 'fuzz-secret-0123456789abcdef', PARTNER_CHEF_PAY_WEBHOOK_SECRET: 'fuzz-secret-abcdef0123456789' },
    });
    w = await buildWorld(t, await sessionsOf(t, demoLogins()), true);
    ids = [
      w.territoryId,
      w.driverId,
      w.merchantId,
      w.branchId,
      ...w.itemIds,
      w.couponId,
      w.tariffId,
      w.addressId,
      w.orderId,
      w.tripId,
      w.objectId,
      w.uploadId,
      w.documentId,
      w.notificationId,
      w.deviceId,
      w.organizationId,
      ...Object.values(w.users),
    ];
  }, 180_000);
  afterAll(() => t?.close());

  describe(`fuzzing every operation from the OpenAPI document (${runs} cases per role)`, () => {
    for (const role of ['admin', 'customer'] as const) {
      it(
        `as ${role}: never a 5xx, every 4xx a problem+json body`,
        async () => {
          const { failures, requests, operations } = await fuzzAll(t, w.sessions[role], role, ids, runs, seed);
          expect(operations).toBeGreaterThan(100);
          expect(requests).toBeGreaterThan(operations);
          expect(failures).toEqual([]);
        },
        timeout,
      );
    }

    it('requests outside the operations (paths, methods, oversized bodies, headers) are answered, not crashed on', async () => {
      expect(await fuzzEdges(t, w.sessions.driver)).toEqual([]);
    });

    it('the server is still up and the seeded data still readable', async () => {
      expect((await t.req(null, { method: 'GET', url: '/health' })).statusCode).toBe(200);
      const me = await t.req(w.sessions.admin, { method: 'GET', url: '/me' });
      expect(me.statusCode).toBe(200);
      const trips = await t.req(w.sessions.admin, { method: 'GET', url: '/trips?limit=100' });
      expect(trips.statusCode).toBe(200);
    });
  });
}
