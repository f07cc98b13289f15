import {
  API_KEY_PREFIX,
  API_KEY_SCOPES,
  tenantOf,
  type AccessClaims,
  type Actor,
  type ApiKeyScope,
  type Principal,
} from '../../platform/auth.js';
import { AppError } from '../../platform/errors.js';
import { newId, randomToken, safeEqual, sha256Hex } from '../../platform/ids.js';
import { pageRequest, toPage } from '../../platform/pagination.js';
import { recordAudit } from '../../platform/audit.js';
import { enforceRateLimit } from '../../platform/rate-limit.js';
import type { Tx } from '../../platform/db/index.js';
import type { ApiKeysContext } from './context.js';
import * as repo from './repo.js';

/** The scopes an owner of this kind may grant (a key never does more than its owner). */
export const scopesOf = (kind: Principal): ApiKeyScope[] =>
  (Object.keys(API_KEY_SCOPES) as ApiKeyScope[]).filter((s) => (API_KEY_SCOPES[s].owners as readonly Principal[]).includes(kind));

export function apiKeyOut(k: repo.ApiKeyRecord) {
  return {
    id: k.id,
    organization_id: k.organizationId,
    owner_user_id: k.ownerUserId,
    name: k.name,
    scopes: k.scopes as ApiKeyScope[],
    key_hint: `${API_KEY_PREFIX}${k.id}_…${k.secretHint}`,
    created_by: k.createdBy,
    created_at: k.createdAt,
    last_used_at: k.lastUsedAt,
    revoked_at: k.revokedAt,
  };
}

/** The session id an API key's actor carries (audit rows, open streams). */
const KEY_SESSION = 'api-key:';

const INVALID = () => AppError.unauthorized('The API key is invalid, revoked or its owner inactive', 'INVALID_API_KEY');

/** `dlk_<id>_<secret>`: the id (a UUID, no underscore) and the secret (base64url, may hold underscores). */
function parseKey(token: string): { id: string; secret: string } | null {
  const m = /^dlk_([0-9a-f-]{36})_([A-Za-z0-9_-]{43})$/.exec(token);
  return m ? { id: m[1], secret: m[2] } : null;
}

export function createApiKeyService(ctx: ApiKeysContext) {
  const { db } = ctx;
  const settings = ctx.config.settings;

  function owned(actor: Actor, k: repo.ApiKeyRecord | null): repo.ApiKeyRecord {
    if (!k || (actor.kind !== 'administrator' && k.ownerUserId !== actor.userId)) throw AppError.notFound('API key');
    return k;
  }

  return {
    async create(actor: Actor, input: { name: string; scopes: ApiKeyScope[] }) {
      const allowed = scopesOf(actor.kind);
      const outside = input.scopes.filter((s) => !allowed.includes(s));
      if (outside.length) {
        throw AppError.unprocessable(`Scopes the owner may not grant: ${outside.join(', ')}`, 'API_KEY_SCOPE_NOT_ALLOWED', [
          { field: 'scopes', message: `a ${actor.kind} may grant ${allowed.join(', ')}` },
        ]);
      }
      const scopes = [...new Set(input.scopes)];
      return db.withTenant(tenantOf(actor), async (tx) => {
        if ((await repo.countLiveKeys(tx, actor.userId)) >= settings.API_KEY_MAX_PER_OWNER) {
          throw AppError.unprocessable(`At most ${settings.API_KEY_MAX_PER_OWNER} live API keys per owner`, 'API_KEY_LIMIT');
        }
        const id = newId();
        const secret = randomToken(32);
        const k = await repo.insertKey(tx, {
          organizationId: actor.organizationId,
          id,
          ownerUserId: actor.userId,
          name: input.name.trim(),
          scopes,
          secretHash: sha256Hex(secret),
          secretHint: secret.slice(-4),
          createdBy: actor.userId,
        });
        await recordAudit(tx, actor, {
          action: 'api_key.created',
          entityType: 'api_key',
          entityId: id,
          after: { name: k.name, scopes, owner_user_id: k.ownerUserId },
        });
        return { ...apiKeyOut(k), key: `${API_KEY_PREFIX}${id}_${secret}` };
      });
    },

    async list(actor: Actor, q: { limit?: number; cursor?: string }) {
      const page = pageRequest(q);
      return db.withTenant(tenantOf(actor), async (tx) => {
        const rows = await repo.listKeys(tx, {
          ownerUserId: actor.kind === 'administrator' ? null : actor.userId,
          after: page.after,
          limit: page.limit,
        });
        return toPage(rows, page, apiKeyOut);
      });
    },

    async revoke(actor: Actor, id: string): Promise<void> {
      await db.withTenant(tenantOf(actor), async (tx) => {
        const k = owned(actor, await repo.getKey(tx, id));
        if (k.revokedAt) return;
        await repo.revokeKey(tx, id);
        await recordAudit(tx, actor, {
          action: 'api_key.revoked',
          entityType: 'api_key',
          entityId: id,
          before: { name: k.name, scopes: k.scopes },
        });
      });
    },

    /**
     * For open event streams (realtime): which of these session ids (`api-key:<id>`, others are ignored) belong to a
     * live key of an active owner, as `<organization>:<session id>`. A revoked key or a deactivated owner ends them.
     */
    async aliveKeySessions(tx: Tx, sessionIds: string[]): Promise<Set<string>> {
      const ids = sessionIds.filter((s) => s.startsWith(KEY_SESSION)).map((s) => s.slice(KEY_SESSION.length));
      const alive = new Set<string>();
      for (const k of await repo.liveKeys(tx, ids)) {
        const owner = await ctx.deps.identity.principalOfUser(tx, k.ownerUserId);
        if (owner?.active) alive.add(`${k.organizationId}:${KEY_SESSION}${k.id}`);
      }
      return alive;
    },

    /**
     * Authentication (the actor resolver's hook): the key's owner, narrowed to the key's scopes that the owner may
     * still grant; refused when unknown, revoked, of a wrong secret or of an owner no longer active. Counted per key.
     */
    async claims(token: string): Promise<AccessClaims> {
      const parsed = parseKey(token);
      if (!parsed) throw INVALID();
      const k = await db.withSystem((tx) => repo.liveKeyById(tx, parsed.id));
      if (!k || !safeEqual(sha256Hex(parsed.secret), k.secretHash)) throw INVALID();
      const owner = await db.withTenant({ organizationId: k.organizationId, userId: k.ownerUserId }, async (tx) => {
        const o = await ctx.deps.identity.principalOfUser(tx, k.ownerUserId);
        if (o?.active) await repo.touchKey(tx, k.organizationId, k.id);
        return o;
      });
      if (!owner?.active) throw INVALID();
      await enforceRateLimit(db, `apikey:${k.organizationId}:${k.id}`, settings.API_KEY_RATE_LIMIT_PER_MINUTE, 'requests per API key');
      const grantable = scopesOf(owner.kind);
      return {
        sub: k.ownerUserId,
        org: k.organizationId,
        role: owner.role,
        kind: owner.kind,
        sid: `${KEY_SESSION}${k.id}`,
        key: { id: k.id, scopes: (k.scopes as ApiKeyScope[]).filter((s) => grantable.includes(s)) },
      };
    },
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
