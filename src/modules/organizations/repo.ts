import { prepared, type Tx } from '../../platform/db/index.js';
import { selectList, type SnakeRow } from '../../platform/db/columns.js';
import type { OperatorStatus } from './schemas.js';
import { operator, organization, organizationSettings } from './tables.js';

/** An operator account as stored (derived from the table); lists add the organization's name. */
export type OperatorRow = SnakeRow<typeof operator.$inferSelect> & { organization_name?: string };
/** The settings an organization shows and edits (derived from the table). */
export type SettingsRow = Omit<SnakeRow<typeof organizationSettings.$inferSelect>, 'organization_id' | 'updated_by_user_id'>;
export type SettingsPatch = Partial<Omit<SettingsRow, 'updated_at'>>;
/** An organization's brand (derived from the table). */
export type BrandingRow = Pick<
  SnakeRow<typeof organization.$inferSelect>,
  'id' | 'name' | 'primary_color' | 'secondary_color' | 'logo_object_id'
>;
export type BrandingPatch = Partial<Omit<BrandingRow, 'id'>>;

const SETTINGS_COLUMNS = selectList(organizationSettings, 's', { omit: ['organizationId', 'updatedByUserId'] });
const BRANDING_COLUMNS = 'id, name, primary_color, secondary_color, logo_object_id';

// ---------------------------------------------------------------- onboarding

export async function slugTaken(tx: Tx, slug: string): Promise<boolean> {
  return (await tx.query('SELECT 1 FROM organization WHERE slug = $1', [slug])).rowCount > 0;
}

/**
 * Creates the organization row and points the transaction's tenant context at it (the row is created before
 * the context can name it), then its settings.
 */
export async function insertOrganization(tx: Tx, v: { id: string; name: string; slug: string; defaultCountry: string }): Promise<void> {
  await tx.query('INSERT INTO organization (id, name, slug) VALUES ($1, $2, $3)', [v.id, v.name, v.slug]);
  await tx.query("SELECT set_config('app.organization_id', $1, true)", [v.id]);
  await tx.query('INSERT INTO organization_settings (organization_id, default_country) VALUES ($1, $2)', [v.id, v.defaultCountry]);
}

export async function insertOperator(
  tx: Tx,
  v: Pick<OperatorRow, 'organization_id' | 'id' | 'status' | 'legal_name' | 'contact_email' | 'contact_phone' | 'country'>,
): Promise<void> {
  await tx.query(
    'INSERT INTO operator (organization_id, id, status, legal_name, contact_email, contact_phone, country) VALUES ($1,$2,$3,$4,$5,$6,$7)',
    [v.organization_id, v.id, v.status, v.legal_name, v.contact_email, v.contact_phone, v.country],
  );
}

// ---------------------------------------------------------------- operators

export async function operatorStatus(tx: Tx, organizationId: string): Promise<OperatorStatus | null> {
  const { rows } = await tx.query<{ status: OperatorStatus }>('SELECT status FROM operator WHERE organization_id = $1', [organizationId]);
  return rows[0]?.status ?? null;
}

/** The operator accounts visible in the transaction (all of them in a system transaction), newest first. */
export async function listOperators(
  tx: Tx,
  f: { status: OperatorStatus | null; after: string | null; limit: number },
): Promise<OperatorRow[]> {
  const { rows } = await tx.query<OperatorRow>(
    `SELECT op.*, o.name AS organization_name FROM operator op JOIN organization o ON o.id = op.organization_id
      WHERE ($1::text IS NULL OR op.status = $1) AND ($2::text IS NULL OR op.id < $2)
      ORDER BY op.id DESC LIMIT $3`,
    [f.status, f.after, f.limit],
  );
  return rows;
}

export async function lockOperator(tx: Tx, operatorId: string): Promise<OperatorRow | null> {
  const { rows } = await tx.query<OperatorRow>('SELECT * FROM operator WHERE id = $1 FOR UPDATE', [operatorId]);
  return rows[0] ?? null;
}

/** The decision on an operator, announced to every instance (NOTIFY operator_changed). */
export async function decideOperator(
  tx: Tx,
  op: Pick<OperatorRow, 'organization_id' | 'id'>,
  to: OperatorStatus,
  reason: string | null,
  userId: string,
): Promise<OperatorRow> {
  const { rows } = await tx.query<OperatorRow>(
    `UPDATE operator SET status = $3, status_reason = $4, decided_by_user_id = $5, decided_at = now(), updated_at = now()
      WHERE organization_id = $1 AND id = $2 RETURNING *`,
    [op.organization_id, op.id, to, reason, userId],
  );
  await tx.query("SELECT pg_notify('operator_changed', $1)", [op.organization_id]);
  return rows[0];
}

/** The tenant's operator status (dashboard). */
export async function ownOperatorStatus(tx: Tx): Promise<OperatorStatus | null> {
  const { rows } = await tx.query<{ status: OperatorStatus }>('SELECT status FROM operator');
  return rows[0]?.status ?? null;
}

// ---------------------------------------------------------------- settings

export async function findSettings(tx: Tx, lock = false): Promise<SettingsRow | null> {
  const { rows } = await tx.query<SettingsRow>(
    prepared(`SELECT ${SETTINGS_COLUMNS} FROM organization_settings s${lock ? ' FOR UPDATE' : ''}`),
  );
  return rows[0] ?? null;
}

/** Sets the given fields (validated by the route schema) and who changed them. */
export async function updateSettings(tx: Tx, userId: string, patch: SettingsPatch): Promise<SettingsRow> {
  const fields = Object.keys(patch) as (keyof SettingsPatch)[];
  const sets = fields.map((f, i) => `${f} = $${i + 2}`).join(', ');
  const { rows } = await tx.query<SettingsRow>(
    `UPDATE organization_settings s SET ${sets}, updated_by_user_id = $1, updated_at = now() RETURNING ${SETTINGS_COLUMNS}`,
    [userId, ...fields.map((f) => patch[f])],
  );
  return rows[0];
}

// ---------------------------------------------------------------- branding

export async function findBranding(tx: Tx, organizationId: string, lock = false): Promise<BrandingRow | null> {
  const { rows } = await tx.query<BrandingRow>(`SELECT ${BRANDING_COLUMNS} FROM organization WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [
    organizationId,
  ]);
  return rows[0] ?? null;
}

export async function updateBranding(tx: Tx, organizationId: string, patch: BrandingPatch): Promise<BrandingRow> {
  const fields = Object.keys(patch) as (keyof BrandingPatch)[];
  const sets = fields.map((f, i) => `${f} = $${i + 2}`).join(', ');
  const { rows } = await tx.query<BrandingRow>(
    `UPDATE organization SET ${sets}, updated_at = now() WHERE id = $1 RETURNING ${BRANDING_COLUMNS}`,
    [organizationId, ...fields.map((f) => patch[f])],
  );
  return rows[0];
}

/** The tenant's organization with its slug (mobile brand assets). */
export async function ownBranding(tx: Tx): Promise<(BrandingRow & { slug: string }) | undefined> {
  const { rows } = await tx.query<BrandingRow & { slug: string }>(
    'SELECT id, name, slug, primary_color, secondary_color, logo_object_id FROM organization',
  );
  return rows[0];
}

/** Whether the storage object is the organization's logo (everyone in it may read it). */
export async function isOrganizationLogo(tx: Tx, objectId: string): Promise<boolean> {
  return (await tx.query('SELECT 1 FROM organization WHERE logo_object_id = $1', [objectId])).rowCount > 0;
}

// ---------------------------------------------------------------- directory (for identity)

/** The default phone countries in use (every organization's in a system transaction). */
export async function phoneCountriesInUse(tx: Tx): Promise<string[]> {
  return (await tx.query<{ c: string }>('SELECT DISTINCT default_country AS c FROM organization_settings')).rows.map((r) => r.c);
}

/** The names of the organizations with these ids, of those visible in the transaction. */
export async function organizationNames(tx: Tx, ids: readonly string[]): Promise<Map<string, string>> {
  const { rows } = await tx.query<{ id: string; name: string }>('SELECT id, name FROM organization WHERE id = ANY($1::text[])', [ids]);
  return new Map(rows.map((r) => [r.id, r.name]));
}
