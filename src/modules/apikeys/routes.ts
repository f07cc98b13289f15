import { Type, type Static } from '@sinclair/typebox';
import { API_KEY_SCOPE_NAMES, actorOf } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import { IdParams, Page, PageQueryProps, Strict } from '../../platform/schemas.js';
import type { ApiKeyService, apiKeyOut } from './service.js';
import { ApiKeyOut, Scope, WithKey } from './schemas.js';

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
