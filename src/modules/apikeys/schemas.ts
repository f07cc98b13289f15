import { Type } from '@sinclair/typebox';
import { API_KEY_SCOPES, API_KEY_SCOPE_NAMES } from '../../platform/auth.js';
import { Nullable, Timestamp } from '../../platform/schemas.js';

export const Scope = Type.Union(
  API_KEY_SCOPE_NAMES.map((s) => Type.Literal(s)),
  {
    description: API_KEY_SCOPE_NAMES.map(
      (s) => `\`${s}\`: ${API_KEY_SCOPES[s].text} (owners: ${API_KEY_SCOPES[s].owners.join(', ')})`,
    ).join('; '),
  },
);

export const ApiKeyOut = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  owner_user_id: Type.String({ description: 'the key acts as this user, narrowed to its scopes; refused once he is deactivated' }),
  name: Type.String(),
  scopes: Type.Array(Scope),
  key_hint: Type.String({ description: 'the key with its secret cut to its last characters' }),
  created_by: Type.String(),
  created_at: Timestamp,
  last_used_at: Nullable(Timestamp),
  revoked_at: Nullable(Timestamp),
});
export const WithKey = Type.Composite([
  ApiKeyOut,
  Type.Object({ key: Type.String({ description: 'the key to send as `Authorization: Bearer dlk_…`, shown only in this response' }) }),
]);
