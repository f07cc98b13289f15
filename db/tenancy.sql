-- Tenancy, applied after every migration run; idempotent.
-- Every table with an organization_id column: RLS enabled and FORCED, one policy on app.organization_id.
-- The tenant role has no superuser and no BYPASSRLS, so a query that forgets its filter still sees one tenant.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'app_tenant') THEN
    CREATE ROLE app_tenant NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
  END IF;
END $$;

GRANT USAGE ON SCHEMA public TO app_tenant;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO app_tenant;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO app_tenant;
REVOKE ALL ON _migrations FROM app_tenant;

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

-- Append-only tables: the tenant role may insert and read, never rewrite history.
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['event', 'audit_log', 'merchant_wallet_entry'] LOOP
    IF to_regclass('public.' || t) IS NOT NULL THEN
      EXECUTE format('REVOKE UPDATE, DELETE ON %I FROM app_tenant', t);
    END IF;
  END LOOP;
END $$;

-- Platform tables without a tenant: not reachable by the tenant role at all.
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['rate_limit_bucket', 'login_throttle', 'login_known_address'] LOOP
    IF to_regclass('public.' || t) IS NOT NULL THEN
      EXECUTE format('REVOKE ALL ON %I FROM app_tenant', t);
    END IF;
  END LOOP;
END $$;
