import { Type } from '@sinclair/typebox';
import { actorOf, APP_ROLES } from '../../platform/auth.js';
import {
  Email,
  TooMany,
  Nullable,
  PageQueryProps,
  Page,
  Phone,
  Strict,
  Timestamp,
  ShortText,
  Id,
  NewPassword,
  OneOf,
} from '../../platform/schemas.js';
import type { Api } from '../../platform/context.js';
import type { IdentityContext } from './index.js';

const Role = Type.Union(APP_ROLES.map((r) => Type.Literal(r)));
const Kind = Type.String({ description: 'platform | administrator | dispatch | subadmin | comercio | delivery | repartidor' });

export const UserOut = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  email: Nullable(Type.String()),
  phone: Nullable(Type.String()),
  display_name: Type.String(),
  role: Role,
  kind: Kind,
  dispatch: Type.Boolean(),
  subadmin: Type.Boolean(),
  active: Type.Boolean(),
  created_at: Timestamp,
});

const Tokens = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'access token lifetime in seconds (900)' }),
  refresh_token: Type.String({ description: 'opaque, single use; rotate with /auth/refresh (30 days)' }),
  refresh_expires_at: Timestamp,
  user: UserOut,
});

const Password = Type.String({ minLength: 1, maxLength: 200 });

export const PASSWORD_RULES =
  'A password needs at least 10 characters (at most 200), no composition rules, and must not be one of the common passwords shipped ' +
  'with the service (src/modules/identity/common-passwords.ts, also with trailing punctuation removed), one repeated character or ' +
  'contain the name part of the email (NIST SP 800-63B); otherwise 400 WEAK_PASSWORD.';

export const LOGIN_LIMITS =
  'Guessing is throttled, never locked out (OWASP authentication cheat sheet); every counter lives in the database, shared by all instances. ' +
  '(1) Per client address: LOGIN_RATE_LIMIT_PER_IP attempts per minute over all logins (default 50), then 429 RATE_LIMITED. ' +
  '(2) Per login (email or phone) and address: 5 attempts without delay (LOGIN_FREE_ATTEMPTS); from the 5th failed one the address ' +
  'waits 1 s before its next attempt, doubled after each further failure (2 s, 4 s, ...) up to 15 min (LOGIN_MAX_DELAY_SECONDS); ' +
  'a successful login resets it, and the count starts over after 24 h. (3) Per login, from all addresses: after 20 failures within ' +
  '15 min (LOGIN_ACCOUNT_CEILING) addresses that never logged in to it successfully (in the last 30 days) share one attempt per 30 s, ' +
  'while known addresses of the owner keep their own back-off only. A held-back attempt is not checked and answers ' +
  '429 LOGIN_THROTTLED (problem+json) with Retry-After in seconds; the answers are the same for logins that exist and those that do not.';

/** Login: exactly one identifier, email or phone. */
export const LoginWithEmail = Strict({ email: Email, password: Password, organization_id: Type.Optional(Id) }, { title: 'LoginWithEmail' });
export const LoginWithPhone = Strict({ phone: Phone, password: Password, organization_id: Type.Optional(Id) }, { title: 'LoginWithPhone' });
const LoginBody = OneOf([LoginWithEmail, LoginWithPhone], { description: 'exactly one of `email` or `phone`, with the password' });

/** A new user needs an email, a phone or both. */
const newUserFields = { password: NewPassword, display_name: ShortText(120), role: Role, dispatch: Type.Optional(Type.Boolean()) };
const NewUserBody = Type.Union(
  [
    Strict({ email: Email, phone: Type.Optional(Phone), ...newUserFields }, { title: 'NewUserByEmail' }),
    Strict({ email: Type.Optional(Email), phone: Phone, ...newUserFields }, { title: 'NewUserByPhone' }),
  ],
  { description: '`email`, `phone` or both; a user with the same email or phone in the organization is 409 DUPLICATE_USER' },
);

export function identityRoutes(app: Api, ctx: IdentityContext) {
  const svc = ctx.deps.identity;

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
        body: Strict({ refresh_token: Type.String({ minLength: 10, maxLength: 200 }) }),
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
        body: Strict({ refresh_token: Type.String({ minLength: 10, maxLength: 200 }) }),
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
          200: Type.Object({
            ...UserOut.properties,
            organization: Type.Object({ id: Type.String(), name: Type.String() }),
            subadmin_scope: Nullable(
              Type.Object({
                territory_ids: Type.Array(Type.String()),
                permissions: Type.Record(Type.String(), Type.Boolean()),
                commission_min_percent: Nullable(Type.String()),
                commission_max_percent: Nullable(Type.String()),
                active: Type.Boolean(),
              }),
            ),
          }),
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
        querystring: Strict({
          ...PageQueryProps,
          role: Type.Optional(Role),
          q: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 100,
              description: 'part of the email or display name, matched literally (case-insensitive)',
            }),
          ),
        }),
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
}
