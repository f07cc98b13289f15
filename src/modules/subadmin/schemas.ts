import { Type, type Static } from '@sinclair/typebox';
import { SUBADMIN_PERMISSION_KEYS, type PermissionKey } from '../../platform/auth.js';
import { Email, Id, Nullable, Phone, ShortText, Strict, Timestamp } from '../../platform/schemas.js';

/** Every permission key with its value (a stored profile may miss keys: they take the defaults). */
export type Permissions = Record<PermissionKey, boolean>;

export const PercentPattern = '^\\d{1,3}(\\.\\d{1,2})?$';
export const Percent = Type.String({ pattern: PercentPattern, description: 'percentage 0..100 with at most 2 decimals, e.g. "12.50"' });
export const PermissionsIn = Strict(Object.fromEntries(SUBADMIN_PERMISSION_KEYS.map((k) => [k, Type.Optional(Type.Boolean())])));
export const PermissionsOut = Type.Object(Object.fromEntries(SUBADMIN_PERMISSION_KEYS.map((k) => [k, Type.Boolean()])));
export const TerritoryIds = Type.Array(Id, { minItems: 1, maxItems: 100, uniqueItems: true });

export const ProfileOut = Type.Object({
  user_id: Type.String(),
  email: Nullable(Type.String()),
  phone: Nullable(Type.String()),
  display_name: Type.String(),
  active: Type.Boolean(),
  permissions: PermissionsOut,
  territory_ids: Type.Array(Type.String()),
  parent_subadmin_user_id: Nullable(Type.String()),
  created_by_user_id: Nullable(Type.String()),
  commission_min_percent: Nullable(Type.String()),
  commission_max_percent: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const ProfileCreateProps = {
  email: Type.Optional(Email),
  phone: Type.Optional(Phone),
  password: Type.String({ minLength: 10, maxLength: 200 }),
  display_name: ShortText(120),
  territory_ids: TerritoryIds,
  permissions: Type.Optional(PermissionsIn),
  commission_min_percent: Type.Optional(Nullable(Percent)),
  commission_max_percent: Type.Optional(Nullable(Percent)),
  active: Type.Optional(Type.Boolean()),
};

export const EffectiveScopeOut = Type.Object({
  active: Type.Boolean(),
  territory_ids: Type.Array(Type.String()),
  territories: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), active: Type.Boolean() })),
  permissions: PermissionsOut,
  commission_min_percent: Nullable(Type.String()),
  commission_max_percent: Nullable(Type.String()),
});

export const BannerStateSchema = Type.Union(
  [Type.Literal('live'), Type.Literal('scheduled'), Type.Literal('expired'), Type.Literal('inactive')],
  {
    description: 'live = active and now within [valid_from, valid_until); scheduled = not started; expired; inactive',
  },
);
export type BannerState = Static<typeof BannerStateSchema>;

export const BannerOut = Type.Object({
  id: Type.String(),
  title: Type.String(),
  body: Nullable(Type.String()),
  image_storage_object_id: Nullable(Type.String()),
  link_url: Nullable(Type.String()),
  valid_from: Timestamp,
  valid_until: Nullable(Timestamp),
  active: Type.Boolean(),
  state: BannerStateSchema,
  territory_ids: Type.Array(Type.String(), { description: 'sub-administrators see only their own territories here' }),
  created_by_user_id: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const BannerIn = Strict({
  title: ShortText(120),
  body: Type.Optional(ShortText(1000)),
  image_storage_object_id: Type.Optional(Id),
  link_url: Type.Optional(Type.String({ format: 'uri', maxLength: 500, pattern: '^https?://' })),
  valid_from: Type.Optional(Type.String({ format: 'date-time' })),
  valid_until: Type.Optional(Type.String({ format: 'date-time' })),
  active: Type.Optional(Type.Boolean()),
  territory_ids: TerritoryIds,
});
export type NewBanner = Static<typeof BannerIn>;

/** The creation period of the console lists and reports. */
export const PeriodQueryProps = {
  from: Type.Optional(Type.String({ format: 'date-time', description: 'created at or after (ISO 8601)' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'created before (ISO 8601)' })),
};

/** Records per status. */
export const Counts = Type.Record(Type.String(), Type.Integer());

export const READS_DOC = 'Administrators see the whole organization; sub-administrators only their territories.';
