import { Type } from '@sinclair/typebox';
import { actorOf } from '../../platform/auth.js';
import type { Api } from '../../platform/context.js';
import { IdParams, Page, TooMany } from '../../platform/schemas.js';
import {
  LOGIN_LIMITS,
  LoginBody,
  MeOut,
  NewUserBody,
  PASSWORD_RULES,
  RefreshTokenBody,
  Tokens,
  UserListQuery,
  UserOut,
  UserStatusBody,
} from './schemas.js';
import type { IdentityService } from './service/accounts.js';
import type { UserDeactivation } from './service/deactivation.js';

const DEACTIVATE_DOC =
  'Organization administrators only; users of other organizations are 404. In one transaction: the user is marked inactive, every session and refresh ' +
  'token of the user is revoked, open SSE streams of the user close within a second (on every instance, through NOTIFY session_revoked), and a driver ' +
  "profile goes unavailable with its assigned/accepted trips back to pending. Afterwards any request with the user's access token is 401 `SESSION_REVOKED`, " +
  '/auth/refresh is 401 `INVALID_REFRESH_TOKEN`, and login is 401 `INVALID_CREDENTIALS` (the same answer as a wrong password). Refused: oneself ' +
  '(422 `CANNOT_DEACTIVATE_SELF`), the last active administrator (409 `LAST_ADMINISTRATOR`), platform operators (403 `PLATFORM_USER`). ' +
  'Deactivating an inactive user changes nothing. Audited (`user.deactivated`, with the reason).';

export function identityRoutes(app: Api, svc: IdentityService, users: UserDeactivation) {
  app.post(
    '/auth/login',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'login',
        tags: ['auth'],
        summary: 'Log in with email or phone and password',
        description:
          'A wrong password and an unknown login both answer 401 INVALID_CREDENTIALS. The same email may have accounts in several ' +
          'organizations: the password decides; if it matches exactly one account, that one logs in; if it matches several, ' +
          '400 ORGANIZATION_REQUIRED lists them (`organizations`: id and name) and the client repeats the call with organization_id. ' +
          'The client address is the socket peer unless TRUST_PROXY names the proxies whose X-Forwarded-For is believed. ' +
          LOGIN_LIMITS,
        body: LoginBody,
        response: { 200: Tokens, 429: TooMany },
      },
    },
    async (req) => svc.login(req.body, req.ip, req.headers['user-agent']),
  );

  app.post(
    '/auth/refresh',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'refreshToken',
        tags: ['auth'],
        summary: 'Rotate a refresh token (a reused token revokes its whole family)',
        description:
          'Single use: the answer carries a new pair. The same refresh token presented again within REFRESH_REUSE_GRACE_SECONDS ' +
          '(default 10 s) of its rotation, e.g. by two concurrent requests, answers the same new pair; later (or once that new ' +
          'refresh token was itself used) the reuse revokes the whole session: 401 REFRESH_TOKEN_REUSED. Access tokens carry iat and ' +
          'exp (ACCESS_TOKEN_TTL_SECONDS); a token without them is refused (401 INVALID_TOKEN).',
        body: RefreshTokenBody,
        response: { 200: Tokens },
      },
    },
    async (req) => svc.refresh(req.body.refresh_token),
  );

  app.post(
    '/auth/mobile/revoke',
    {
      config: { auth: { allowUnapprovedOperator: true } },
      schema: {
        operationId: 'revokeRefreshToken',
        tags: ['auth'],
        summary: "Revoke one of the caller's refresh tokens (and its session)",
        body: RefreshTokenBody,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await svc.revokeRefreshToken(actorOf(req), req.body.refresh_token);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/auth/logout',
    {
      config: { auth: { allowUnapprovedOperator: true } },
      schema: { operationId: 'logout', tags: ['auth'], summary: 'End the current session', response: { 204: Type.Null() } },
    },
    async (req, reply) => {
      await svc.logout(actorOf(req));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/me',
    {
      config: { auth: { allowUnapprovedOperator: true } },
      schema: {
        operationId: 'getMe',
        tags: ['auth'],
        response: {
          200: MeOut,
        },
      },
    },
    async (req) => svc.me(actorOf(req)),
  );

  app.get(
    '/app-users',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'listAppUsers',
        tags: ['users'],
        querystring: UserListQuery,
        response: { 200: Page(UserOut) },
      },
    },
    async (req) => svc.listAppUsers(actorOf(req), req.query),
  );

  app.post(
    '/app-users',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'createAppUser',
        tags: ['users'],
        summary: 'Create a user of the organization (app role, optional dispatch flag)',
        description: PASSWORD_RULES,
        body: NewUserBody,
        response: { 201: UserOut },
      },
    },
    async (req, reply) => reply.code(201).send(await svc.createAppUser(actorOf(req), req.body)),
  );

  app.post(
    '/app-users/:id/deactivate',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'deactivateAppUser',
        tags: ['users'],
        summary: 'Deactivate a user of the organization: sessions revoked at once',
        description: DEACTIVATE_DOC,
        params: IdParams,
        body: UserStatusBody,
        response: { 200: UserOut },
      },
    },
    async (req) => users.deactivate(actorOf(req), req.params.id, req.body?.reason),
  );

  app.post(
    '/app-users/:id/reactivate',
    {
      config: { auth: { roles: ['administrator'] } },
      schema: {
        operationId: 'reactivateAppUser',
        tags: ['users'],
        summary: 'Reactivate a deactivated user of the organization',
        description:
          "Organization administrators only; other organizations' users are 404. The user may log in again (old sessions stay revoked). A driver profile stays " +
          'unavailable until he or staff turn it on. Reactivating an active user changes nothing. Audited (`user.reactivated`).',
        params: IdParams,
        body: UserStatusBody,
        response: { 200: UserOut },
      },
    },
    async (req) => users.reactivate(actorOf(req), req.params.id, req.body?.reason),
  );
}
