import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers.js';

let t: TestApp;
let other: { organizationId: string; logins: Record<string, string> };
beforeAll(async () => {
  t = await createTestApp();
  other = await t.newOrganization();
});
afterAll(() => t?.close());

describe('row-level security', () => {
  it('a query without an organization filter sees only its own tenant', async () => {
    const all = await t.db.withSystem(async (tx) => (await tx.query('SELECT DISTINCT organization_id FROM users')).rows);
    expect(all.length).toBeGreaterThanOrEqual(3); // platform, demo, other
    const mine = await t.db.withTenant({ organizationId: t.demo.organizationId, userId: t.demo.users.admin }, async (tx) => {
      const users = await tx.query<{ organization_id: string }>('SELECT organization_id FROM users');
      const orgs = await tx.query<{ id: string }>('SELECT id FROM organization');
      return { users: users.rows, orgs: orgs.rows };
    });
    expect(mine.users.length).toBeGreaterThan(0);
    expect(new Set(mine.users.map((u) => u.organization_id))).toEqual(new Set([t.demo.organizationId]));
    expect(mine.orgs).toEqual([{ id: t.demo.organizationId }]);
  });

  it('the single-exchange read path is confined the same way', async () => {
    const rows = await t.db.tenantRead<{ organization_id: string }>(
      { organizationId: other.organizationId, userId: null },
      'SELECT organization_id FROM users WHERE $1::int = 1',
      [1],
    );
    expect(rows.length).toBe(5);
    expect(rows.every((r) => r.organization_id === other.organizationId)).toBe(true);
  });

  it('cannot write a row into another tenant', async () => {
    await expect(
      t.db.withTenant({ organizationId: t.demo.organizationId, userId: null }, (tx) =>
        tx.query("INSERT INTO audit_log (organization_id, id, action, entity_type, entity_id) VALUES ($1, 'x1', 'a', 'b', 'c')", [
          other.organizationId,
        ]),
      ),
    ).rejects.toMatchObject({ code: '42501' });
  });

  it('without a tenant context nothing is visible', async () => {
    const rows = await t.db.withTenant({ organizationId: '', userId: null }, async (tx) => (await tx.query('SELECT 1 FROM users')).rows);
    expect(rows).toEqual([]);
  });

  it('every table with organization_id has RLS enabled and forced, with a policy', async () => {
    const rows = await t.db.withSystem(
      async (tx) =>
        (
          await tx.query<{ relname: string; relrowsecurity: boolean; relforcerowsecurity: boolean; policies: number }>(
            `SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,
                    (SELECT count(*)::int FROM pg_policies p WHERE p.tablename = c.relname) AS policies
               FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = 'public' AND c.relkind = 'r'
                AND EXISTS (SELECT 1 FROM information_schema.columns col WHERE col.table_name = c.relname AND col.column_name = 'organization_id')`,
          )
        ).rows,
    );
    expect(rows.length).toBeGreaterThan(5);
    for (const r of rows)
      expect({ table: r.relname, rls: r.relrowsecurity, forced: r.relforcerowsecurity, policy: r.policies > 0 }).toEqual({
        table: r.relname,
        rls: true,
        forced: true,
        policy: true,
      });
  });

  it('every tenant table keeps organization_id in its primary key and unique constraints', async () => {
    const rows = await t.db.withSystem(
      async (tx) =>
        (
          await tx.query<{ table_name: string; constraint_name: string; has_org: boolean }>(
            `SELECT tc.table_name, tc.constraint_name,
                    bool_or(kcu.column_name = 'organization_id') AS has_org
               FROM information_schema.table_constraints tc
               JOIN information_schema.key_column_usage kcu ON kcu.constraint_name = tc.constraint_name AND kcu.table_name = tc.table_name
              WHERE tc.table_schema = 'public' AND tc.constraint_type IN ('PRIMARY KEY', 'UNIQUE')
                AND EXISTS (SELECT 1 FROM information_schema.columns col WHERE col.table_name = tc.table_name AND col.column_name = 'organization_id')
              GROUP BY tc.table_name, tc.constraint_name`,
          )
        ).rows,
    );
    expect(rows.filter((r) => !r.has_org)).toEqual([]);
  });

  it('the tenant role is neither superuser nor BYPASSRLS', async () => {
    const rows = await t.db.withSystem(
      async (tx) => (await tx.query("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = 'app_tenant'")).rows,
    );
    expect(rows).toEqual([{ rolsuper: false, rolbypassrls: false }]);
    const who = await t.db.withTenant(
      { organizationId: t.demo.organizationId, userId: null },
      async (tx) => (await tx.query('SELECT current_user AS u')).rows[0].u,
    );
    expect(who).toBe('app_tenant');
  });

  it('append-only tables refuse updates from the tenant role', async () => {
    await expect(
      t.db.withTenant({ organizationId: t.demo.organizationId, userId: null }, (tx) => tx.query("UPDATE audit_log SET action = 'x'")),
    ).rejects.toMatchObject({ code: '42501' });
  });
});
