import { SignJWT, jwtVerify } from 'jose';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from './errors.js';
import type { TenantContext } from './db/index.js';
import { createCache, type Cache } from './cache.js';

export const APP_ROLES = ['administrator', 'comercio', 'delivery', 'repartidor'] as const;
export type AppRole = (typeof APP_ROLES)[number];

/**
 * Who may call a route. `administrator` is an organization administrator; `dispatch` and `subadmin`
 * are staff flags on an administrator-console user (they do not get administrator rights);
 * `platform` is a platform operator (approves operators of every organization).
 */
export const PRINCIPALS = ['platform', 'administrator', 'dispatch', 'subadmin', 'comercio', 'delivery', 'repartidor'] as const;
export type Principal = (typeof PRINCIPALS)[number];
/** The kinds of an organization's users: every principal but the platform operator. */
export type OrganizationPrincipal = Exclude<Principal, 'platform'>;
export const ORGANIZATION_PRINCIPALS = PRINCIPALS.filter((p): p is OrganizationPrincipal => p !== 'platform');

/**
 * The access rule of a route as the OpenAPI document states it (`x-roles`, `x-permission`, a sentence in the
 * description): derived from `config.auth` by one onRoute hook, never written per route. `documentedAuth` is for
 * routes the hook sees as public that check the caller themselves (SSE streams accept a stream token).
 */
export function accessDoc(
  auth: 'public' | RouteAuth | undefined,
  documentedAuth?: RouteAuth,
): { roles: Principal[]; permission: PermissionKey | null; text: string } {
  const rule = auth === 'public' ? documentedAuth : (auth ?? {});
  if (!rule) return { roles: [], permission: null, text: '**Access**: public (no authentication).' };
  const roles = [...(rule.roles ?? PRINCIPALS)];
  const permission = rule.permission ?? null;
  const who = rule.roles ? `roles ${roles.map((r) => `\`${r}\``).join(', ')}` : 'any authenticated user';
  const sub = roles.includes('subadmin')
    ? permission
      ? `; sub-administrators need the \`${permission}\` permission`
      : '; sub-administrators need no permission key'
    : '';
  const key = rule.apiKeyScope ? ` API keys with the \`${rule.apiKeyScope}\` scope may call it.` : '';
  return { roles, permission, text: `**Access**: ${who}${sub}.${key}` };
}

export const SUBADMIN_PERMISSION_KEYS = [
  'reports',
  'sales_reports',
  'delivery_reports',
  'payments_review_view',
  'tracking',
  'orders_status',
  'delivery_status',
  'drivers_view',
  'drivers_create',
  'drivers_approve',
  'merchants_view',
  'merchants_create',
  'merchants_approve',
  'merchant_commission_manage',
  'trips_cancel',
  'trips_reassign',
  'coupons_view',
  'coupons_manage',
  'banners_manage',
  'subusers_manage',
  'payments_review_decide',
  'cash_remittances_record',
] as const;
export type PermissionKey = (typeof SUBADMIN_PERMISSION_KEYS)[number];

export interface SubadminScope {
  territoryIds: string[];
  permissions: Record<PermissionKey, boolean>;
  commissionMinPercent: string | null;
  commissionMaxPercent: string | null;
  active: boolean;
}

/**
 * What an API key may be granted, and which owners may grant it (a key never does more than its owner). A route
 * that keys may call names its scope in `config.auth.apiKeyScope`; a route without one refuses keys (403 API_KEY_SCOPE).
 */
export const API_KEY_SCOPES = {
  'trips:read': { owners: ['administrator', 'comercio'], text: 'read trips (GET /trips, GET /trips/{id})' },
  'trips:write': { owners: ['administrator', 'comercio'], text: 'create trips (POST /trips)' },
  'orders:read': { owners: ['comercio'], text: "read the merchant's orders (GET /merchant/orders)" },
  'express:read': { owners: ['comercio'], text: "read the merchant's express requests (GET /merchant/delivery-express)" },
  'express:write': { owners: ['comercio'], text: 'request express deliveries (POST /merchant/delivery-express)' },
  'events:read': {
    owners: ['administrator', 'comercio'],
    text: "stream events (GET /realtime/.../stream): the owner's streams (an administrator's: the organization's too)",
  },
} as const satisfies Record<string, { owners: Principal[]; text: string }>;
export type ApiKeyScope = keyof typeof API_KEY_SCOPES;
export const API_KEY_SCOPE_NAMES = Object.keys(API_KEY_SCOPES) as ApiKeyScope[];
/** The recognizable prefix of an API key: `dlk_<key id>_<secret>`. */
export const API_KEY_PREFIX = 'dlk_';

export interface Actor {
  userId: string;
  organizationId: string;
  role: AppRole;
  kind: Principal;
  sessionId: string;
  requestId: string;
  /** Loaded once per request for sub-administrators; null for everyone else. */
  subadmin: SubadminScope | null;
  /** Set when the caller authenticated with an API key: the key and the scopes it may use now. */
  apiKey?: { id: string; scopes: ApiKeyScope[] } | null;
}

export interface RouteAuth {
  /** Who may call; omitted = any authenticated user. */
  roles?: Principal[];
  /** For sub-administrators: the permission key this route needs. */
  permission?: PermissionKey;
  /** Allowed while the organization's operator account is not approved (login, me, onboarding status). */
  allowUnapprovedOperator?: boolean;
  /** The API key scope that lets a key call this route; omitted = keys are refused (403 API_KEY_SCOPE). */
  apiKeyScope?: ApiKeyScope;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `'public'` or who may call the route; enforced by one onRequest hook. */
    auth?: 'public' | RouteAuth;
    /** For the document only: the rule a route declared public enforces itself (see accessDoc). */
    documentedAuth?: RouteAuth;
  }
  interface FastifyRequest {
    actor: Actor | null;
  }
}

export interface AccessClaims {
  sub: string;
  org: string;
  role: AppRole;
  kind: Principal;
  sid: string;
  /** Claims of an API key (never of a signed token): its id and the scopes it may use. */
  key?: { id: string; scopes: ApiKeyScope[] };
}

export const tenantOf = (actor: Pick<Actor, 'organizationId' | 'userId'>): TenantContext => ({
  organizationId: actor.organizationId,
  userId: actor.userId,
});

/**
 * Signs an access token with `iat` and `exp`. HS256 is deterministic: the same claims and `issuedAt`
 * give the same token (the refresh grace window relies on it to hand out the same pair again).
 */
export async function signAccessToken(
  secret: Uint8Array,
  claims: AccessClaims,
  ttlSeconds: number,
  issuedAt: Date = new Date(),
): Promise<string> {
  const iat = Math.floor(issuedAt.getTime() / 1000);
  return new SignJWT({ org: claims.org, role: claims.role, kind: claims.kind, sid: claims.sid, typ: 'access' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuedAt(iat)
    .setIssuer('delivery-api')
    .setAudience('delivery-api')
    .setExpirationTime(iat + ttlSeconds)
    .sign(secret);
}

// Verified tokens, so a client's repeated requests skip the HMAC; an entry lives until the token expires.
const verifiedBySecret = new WeakMap<Uint8Array, Cache<string, { claims: AccessClaims; exp: number }>>();

export async function verifyAccessToken(secret: Uint8Array, token: string): Promise<AccessClaims> {
  let verified = verifiedBySecret.get(secret);
  if (!verified) verifiedBySecret.set(secret, (verified = createCache({ ttlMs: (v) => v.exp * 1000 - Date.now(), maxEntries: 20_000 })));
  return (await verified.get(token, () => verifyUncached(secret, token))).claims;
}

async function verifyUncached(secret: Uint8Array, token: string): Promise<{ claims: AccessClaims; exp: number }> {
  try {
    // A token without an expiry or an issue time is refused, however well signed.
    const { payload } = await jwtVerify(token, secret, {
      issuer: 'delivery-api',
      audience: 'delivery-api',
      algorithms: ['HS256'],
      requiredClaims: ['exp', 'iat', 'sub'],
    });
    if (payload.typ !== 'access' || typeof payload.sub !== 'string' || typeof payload.org !== 'string' || typeof payload.sid !== 'string') {
      throw new Error('not an access token');
    }
    const claims: AccessClaims = {
      sub: payload.sub,
      org: payload.org,
      role: payload.role as AppRole,
      kind: payload.kind as Principal,
      sid: payload.sid,
    };
    return { claims, exp: payload.exp! };
  } catch {
    throw AppError.unauthorized('The access token is invalid or expired', 'INVALID_TOKEN');
  }
}

export interface AuthHooks {
  /** Is the session (refresh family) behind an access token still alive, and the operator approved? */
  sessionState(claims: AccessClaims): Promise<{ active: boolean; operatorApproved: boolean }>;
  /** Loads the territories and permissions of a sub-administrator. */
  loadSubadmin(claims: AccessClaims): Promise<SubadminScope | null>;
  /**
   * An API key (`dlk_…`) to the claims of its owner with the key's scopes (those the owner may still grant);
   * 401 INVALID_API_KEY when unknown, revoked or its owner inactive; 429 over its rate limit.
   */
  apiKeyClaims(token: string): Promise<AccessClaims>;
}

export function bearerToken(req: FastifyRequest): string | null {
  const h = req.headers.authorization;
  if (!h) return null;
  const m = /^Bearer\s+(\S+)$/i.exec(h);
  return m ? m[1] : null;
}

/** Checks a principal against a route's declaration, including the sub-administrator permission key. */
export function authorize(actor: Actor, auth: RouteAuth): void {
  if (actor.apiKey) {
    if (!auth.apiKeyScope) throw AppError.forbidden('API keys may not call this route', 'API_KEY_SCOPE');
    if (!actor.apiKey.scopes.includes(auth.apiKeyScope))
      throw AppError.forbidden(`The API key lacks the '${auth.apiKeyScope}' scope`, 'API_KEY_SCOPE');
  }
  if (auth.roles && !auth.roles.includes(actor.kind)) throw AppError.forbidden();
  if (actor.kind === 'subadmin') {
    if (!actor.subadmin || !actor.subadmin.active)
      throw AppError.forbidden('The sub-administrator profile is inactive', 'SUBADMIN_INACTIVE');
    if (auth.permission && !actor.subadmin.permissions[auth.permission]) {
      throw AppError.forbidden(`Missing permission '${auth.permission}'`, 'PERMISSION_DENIED');
    }
  }
}

/**
 * The one actor resolver, shared by the HTTP hook below and the SSE streams (realtime/service/stream-auth.ts): from verified
 * claims, checks the session is alive and the operator approved, loads a sub-administrator's scope, and checks the
 * route's declaration (roles, permission key).
 */
export type ActorResolver = ((claims: AccessClaims, requestId: string, routeAuth: RouteAuth) => Promise<Actor>) & {
  /** The claims of a bearer token: a signed access token, or an API key (`dlk_…`). */
  claimsOf(secret: Uint8Array, token: string): Promise<AccessClaims>;
};

export function createActorResolver(hooks: AuthHooks): ActorResolver {
  const resolve = async (claims: AccessClaims, requestId: string, routeAuth: RouteAuth): Promise<Actor> => {
    const state = await hooks.sessionState(claims);
    if (!state.active) throw AppError.unauthorized('The session was revoked', 'SESSION_REVOKED');
    if (!state.operatorApproved && !routeAuth.allowUnapprovedOperator && claims.kind !== 'platform') {
      throw AppError.forbidden('The operator account is not approved', 'OPERATOR_NOT_APPROVED');
    }
    const actor: Actor = {
      userId: claims.sub,
      organizationId: claims.org,
      role: claims.role,
      kind: claims.kind,
      sessionId: claims.sid,
      requestId,
      subadmin: claims.kind === 'subadmin' ? await hooks.loadSubadmin(claims) : null,
      apiKey: claims.key ?? null,
    };
    authorize(actor, routeAuth);
    return actor;
  };
  return Object.assign(resolve, {
    claimsOf: (secret: Uint8Array, token: string) =>
      token.startsWith(API_KEY_PREFIX) ? hooks.apiKeyClaims(token) : verifyAccessToken(secret, token),
  });
}

/** One hook enforces every route's `config.auth`. Routes without a declaration need any valid token. */
export function registerAuthHook(app: FastifyInstance, secret: Uint8Array, resolveActor: ActorResolver): void {
  app.decorateRequest('actor', null);
  app.addHook('onRequest', async (req) => {
    const auth = req.routeOptions.config?.auth;
    if (auth === 'public' || !req.routeOptions.url) return;
    const token = bearerToken(req);
    if (!token) throw AppError.unauthorized();
    const claims = await resolveActor.claimsOf(secret, token);
    req.actor = await resolveActor(claims, String(req.id), auth ?? {});
  });
}

/** The authenticated caller of a private route (the hook guarantees it). */
export function actorOf(req: FastifyRequest): Actor {
  if (!req.actor) throw AppError.unauthorized();
  return req.actor;
}

/**
 * The actor of work the service does by itself (timers, workers): organization-wide like an
 * administrator, with no user (audit rows and events carry no actor user).
 */
export function systemActor(organizationId: string, name: string): Actor {
  return {
    userId: null as unknown as string,
    organizationId,
    role: 'administrator',
    kind: 'administrator',
    sessionId: name,
    requestId: name,
    subadmin: null,
  };
}
