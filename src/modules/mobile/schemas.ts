import { Type } from '@sinclair/typebox';
import { APP_ROLES } from '../../platform/auth.js';
import { Nullable, Timestamp } from '../../platform/schemas.js';

export const AppRoleT = Type.Union(APP_ROLES.map((r) => Type.Literal(r)));
export const Any = Type.Unknown();
export const Obj = Type.Record(Type.String(), Type.Unknown());
export const BuildSummary = Type.Object({
  platform: Type.String(),
  version_name: Type.String(),
  build_number: Type.Integer(),
  min_supported_build: Type.Integer(),
  released_at: Timestamp,
});
export const Brand = Type.Object({
  organization_id: Nullable(Type.String()),
  name: Nullable(Type.String()),
  slug: Nullable(Type.String()),
  primary_color: Nullable(Type.String()),
  secondary_color: Nullable(Type.String()),
  logo_object_id: Nullable(Type.String()),
  assets: Type.Object({ logo: Nullable(Type.String({ description: 'authorized download route of the logo' })), manifest: Type.String() }),
});
export const AppBuildOut = Type.Object({
  id: Type.String(),
  app_role: AppRoleT,
  platform: Type.String(),
  package_name: Type.String(),
  version_name: Type.String(),
  build_number: Type.Integer(),
  min_supported_build: Type.Integer(),
  channel: Type.String(),
  released_at: Timestamp,
});
export const SyncResult = Type.Object({
  client_operation_id: Type.String(),
  type: Type.String(),
  status: Type.Union(['applied', 'conflict', 'rejected', 'error'].map((s) => Type.Literal(s))),
  replayed: Type.Boolean(),
  code: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
  data: Type.Optional(Any),
  server: Type.Optional(Any),
});
export const Changes = Type.Object({
  changed: Type.Array(Obj),
  deleted: Type.Array(Type.Object({ id: Type.String(), deleted_at: Timestamp })),
});
