import { Type, type Static } from '@sinclair/typebox';
import { API_KEY_SCOPES, API_KEY_SCOPE_NAMES, actorOf } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import { IdParams, Nullable, Page, PageQueryProps, Strict, Timestamp } from '../../platform/schemas.js';
import type { ApiKeyService, apiKeyOut } from './service.js';

const Scope = Type.Union(
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
const WithKey = Type.Composite([
  ApiKeyOut,
  Type.Object({ key: Type.String({ description: 'the key to send as `Authorization: Bearer dlk_…`, shown only in this response' }) }),
]);

const _k: (x: ReturnType<typeof apiKeyOut>) => Static<typeof ApiKeyOut> = (x) => x;
void _k;

const who = { auth: { roles: ['administrator' as const, 'comercio' as const] } };
const ACCESS = "Administrators manage every key of the organization; merchant users (`comercio`) only their own (another's is 404).";

export function apiKeyRoutes(app: Api, svc: ApiKeyService) {
  app.post(
    '/api-keys',
    {
      config: who,
      schema: {
        operationId: 'createApiKey',
        tags: ['api-keys'],
        summary: 'Creates an API key acting as the caller, narrowed to the scopes given',
        description:
          `${ACCESS} The key (\`dlk_<id>_<secret>\`) is in this response only; only a hash of its secret is kept. A scope the caller may not ` +
          'grant is 422 API_KEY_SCOPE_NOT_ALLOWED; beyond API_KEY_MAX_PER_OWNER live keys 422 API_KEY_LIMIT.',
        body: Strict({
          name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
          scopes: Type.Array(Scope, { minItems: 1, maxItems: API_KEY_SCOPE_NAMES.length }),
        }),
        response: { 201: WithKey },
      },
    },
    async (req, reply) => {
      reply.code(201);
      return svc.create(actorOf(req), req.body);
    },
  );

  app.get(
    '/api-keys',
    {
      config: who,
      schema: {
        operationId: 'listApiKeys',
        tags: ['api-keys'],
        summary: 'API keys, newest first (without their secrets)',
        description: ACCESS,
        querystring: Strict(PageQueryProps),
        response: { 200: Page(ApiKeyOut) },
      },
    },
    async (req) => svc.list(actorOf(req), req.query),
  );

  app.delete(
    '/api-keys/:id',
    {
      config: who,
      schema: {
        operationId: 'revokeApiKey',
        tags: ['api-keys'],
        summary: 'Revokes an API key (refused from the next request on)',
        description: ACCESS,
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await svc.revoke(actorOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );
}
