import { SignJWT, jwtVerify } from 'jose';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../../../platform/errors.js';
import { bearerToken, type AccessClaims, type Actor, type AppRole, type Principal, type RouteAuth } from '../../../platform/auth.js';
import type { RealtimeContext } from '../context.js';
import type { StreamKind } from '../schemas.js';

export const STREAM_TOKEN_TTL_SECONDS = 60;
const AUDIENCE = 'delivery-api:stream';

export interface StreamScope {
  stream?: StreamKind;
  trip_id?: string;
}

/**
 * A stream token: for browsers' EventSource, which cannot send headers. It names the session (so a
 * revoked session cannot open streams), lives 60 s, and has its own type and audience: it is refused
 * as an access token, and an access token is refused as a stream token.
 */
export async function signStreamToken(secret: Uint8Array, claims: AccessClaims, scope: StreamScope): Promise<string> {
  return new SignJWT({ org: claims.org, role: claims.role, kind: claims.kind, sid: claims.sid, typ: 'stream', scope })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuedAt()
    .setIssuer('delivery-api')
    .setAudience(AUDIENCE)
    .setExpirationTime(Math.floor(Date.now() / 1000) + STREAM_TOKEN_TTL_SECONDS)
    .sign(secret);
}

export async function verifyStreamToken(secret: Uint8Array, token: string): Promise<{ claims: AccessClaims; scope: StreamScope }> {
  try {
    const { payload } = await jwtVerify(token, secret, { issuer: 'delivery-api', audience: AUDIENCE, algorithms: ['HS256'] });
    if (payload.typ !== 'stream' || typeof payload.sub !== 'string' || typeof payload.org !== 'string' || typeof payload.sid !== 'string') {
      throw new Error('not a stream token');
    }
    return {
      claims: { sub: payload.sub, org: payload.org, role: payload.role as AppRole, kind: payload.kind as Principal, sid: payload.sid },
      scope: (payload.scope as StreamScope) ?? {},
    };
  } catch {
    throw AppError.unauthorized('The stream token is invalid or expired', 'INVALID_STREAM_TOKEN');
  }
}

/**
 * Stream routes are declared public (the platform hook demands a bearer header) and authenticate here:
 * a bearer access token or API key (the HTTP hook's claims) OR `?stream_token=`, then the platform's actor resolver,
 * the same function the HTTP hook calls (session alive, operator approved, sub-administrator scope, the route's roles,
 * an API key's scope).
 */
export async function streamActor(
  ctx: RealtimeContext,
  req: FastifyRequest,
  streamToken: string | undefined,
  want: { stream: StreamKind; tripId?: string; auth: RouteAuth },
): Promise<Actor> {
  const bearer = bearerToken(req);
  let claims: AccessClaims;
  if (bearer) claims = await ctx.deps.resolveActor.claimsOf(ctx.config.keys.accessToken, bearer);
  else if (streamToken) {
    const v = await verifyStreamToken(ctx.config.keys.streamToken, streamToken);
    if ((v.scope.stream && v.scope.stream !== want.stream) || (v.scope.trip_id && v.scope.trip_id !== want.tripId)) {
      throw AppError.forbidden('This stream token was issued for another stream', 'STREAM_TOKEN_SCOPE');
    }
    claims = v.claims;
  } else throw AppError.unauthorized('A bearer token or a stream_token is required');
  return ctx.deps.resolveActor(claims, String(req.id), want.auth);
}
