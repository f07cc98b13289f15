-- Tenancy, applied after every migration run; idempotent.
-- Every table with an organization_id column: RLS enabled and FORCED, one policy on app.organization_id.
-- The tenant role has no superuser and no BYPASSRLS, so a query that forgets its filter still sees one tenant.
-- Roles are cluster-wide: databases of one server migrating at once (test files, or two deployments sharing a
-- server) race to create it, and the loser's CREATE ROLE fails on the catalog's unique index: a lost race is fine.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'app_tenant') THEN
    CREATE ROLE app_tenant NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
  END IF;
EXCEPTION
  WHEN duplicate_object OR unique_violation THEN NULL;
END $$;

-- The worker role: explicit cross-tenant transactions (db.withSystem) of a least-privilege login role.
-- BYPASSRLS on this NOLOGIN role only (role attributes are not inherited, so a login role that is a member
-- still has RLS applied to its own queries); table privileges only, it owns nothing (no DDL, no policy
-- changes). On a production server the DBA creates it (README, "PostgreSQL"); creating it here needs a
-- superuser and is skipped when it exists. Test files migrate concurrently: a lost creation race is fine.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'app_worker') THEN
    CREATE ROLE app_worker NOLOGIN NOSUPERUSER BYPASSRLS NOCREATEDB NOCREATEROLE;
  END IF;
EXCEPTION
  WHEN duplicate_object OR unique_violation THEN NULL;
  WHEN insufficient_privilege THEN
    RAISE EXCEPTION 'the role app_worker does not exist and % may not create it: create the roles as a superuser first (README, "PostgreSQL")', current_user;
END $$;

GRANT USAGE ON SCHEMA public TO app_tenant, app_worker;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO app_tenant, app_worker;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO app_tenant, app_worker;
REVOKE ALL ON _migrations FROM app_tenant, app_worker;

DO $$
DECLARE r record;
BEGIN
  FOR r IN
    SELECT c.table_name
      FROM information_schema.columns c
      JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
     WHERE c.table_schema = 'public' AND c.column_name = 'organization_id' AND t.table_type = 'BASE TABLE'
  LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', r.table_name);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', r.table_name);
    IF NOT EXISTS (SELECT 1 FROM pg_policies WHERE schemaname = 'public' AND tablename = r.table_name AND policyname = 'tenant_isolation') THEN
      EXECUTE format(
        'CREATE POLICY tenant_isolation ON %I USING (organization_id = current_setting(''app.organization_id'', true)) '
        'WITH CHECK (organization_id = current_setting(''app.organization_id'', true))', r.table_name);
    END IF;
  END LOOP;
END $$;

-- The tenant root: an organization sees only itself.
ALTER TABLE organization ENABLE ROW LEVEL SECURITY;
ALTER TABLE organization FORCE ROW LEVEL SECURITY;
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_policies WHERE schemaname = 'public' AND tablename = 'organization' AND policyname = 'tenant_isolation') THEN
    CREATE POLICY tenant_isolation ON organization USING (id = current_setting('app.organization_id', true))
      WITH CHECK (id = current_setting('app.organization_id', true));
  END IF;
END $$;

-- Append-only tables: the tenant and worker roles may insert and read, never rewrite history.
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['event', 'audit_log', 'merchant_wallet_entry', 'driver_cash_entry'] LOOP
    IF to_regclass('public.' || t) IS NOT NULL THEN
      EXECUTE format('REVOKE UPDATE, DELETE ON %I FROM app_tenant, app_worker', t);
    END IF;
  END LOOP;
END $$;

-- Platform tables without a tenant: not reachable by the tenant role at all (the worker role keeps them).
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['rate_limit_bucket', 'login_throttle', 'login_known_address'] LOOP
    IF to_regclass('public.' || t) IS NOT NULL THEN
      EXECUTE format('REVOKE ALL ON %I FROM app_tenant', t);
    END IF;
  END LOOP;
END $$;

-- Partition upkeep of the GPS history (a SECURITY DEFINER function of the schema owner): the worker role only.
DO $$
BEGIN
  IF to_regprocedure('driver_location_maintain(integer, integer, date)') IS NOT NULL THEN
    REVOKE ALL ON FUNCTION driver_location_maintain(integer, integer, date) FROM PUBLIC, app_tenant;
    GRANT EXECUTE ON FUNCTION driver_location_maintain(integer, integer, date) TO app_worker;
  END IF;
END $$;
