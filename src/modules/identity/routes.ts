import { Type } from '@sinclair/typebox';
import { actorOf, APP_ROLES } from '../../platform/auth.js';
import { Email, Nullable, PageQueryProps, Page, Phone, Strict, Timestamp, ShortText, Id, NewPassword, OneOf } from '../../platform/schemas.js';
import type { Api, AppContext } from '../../platform/context.js';

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

/** Login: exactly one identifier, email or phone. */
export const LoginWithEmail = Strict({ email: Email, password: Password, organization_id: Type.Optional(Id) }, { title: 'LoginWithEmail' });
export const LoginWithPhone = Strict({ phone: Phone, password: Password, organization_id: Type.Optional(Id) }, { title: 'LoginWithPhone' });
const LoginBody = OneOf([LoginWithEmail, LoginWithPhone], { description: 'exactly one of `email` or `phone`, with the password' });

/** A new user needs an email, a phone or both. */
const newUserFields = { password: NewPassword, display_name: ShortText(120), role: Role, dispatch: Type.Optional(Type.Boolean()) };
const NewUserBody = Type.Union(
  [Strict({ email: Email, phone: Type.Optional(Phone), ...newUserFields }, { title: 'NewUserByEmail' }), Strict({ email: Type.Optional(Email), phone: Phone, ...newUserFields }, { title: 'NewUserByPhone' })],
  { description: '`email`, `phone` or both; a user with the same email or phone in the organization is 409 DUPLICATE_USER' },
);

export function identityRoutes(app: Api, ctx: AppContext) {
  const svc = ctx.services.identity;

  app.post(
    '/auth/login',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'login',
        tags: ['auth'],
        summary: 'Log in with email or phone and password',
        body: LoginBody,
        response: { 200: Tokens },
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
            subadmin_scope: Nullable(Type.Object({}, { additionalProperties: true })),
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
        querystring: Strict({ ...PageQueryProps, role: Type.Optional(Role), q: Type.Optional(ShortText(100)) }),
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
        body: NewUserBody,
        response: { 201: UserOut },
      },
    },
    async (req, reply) => reply.code(201).send(await svc.createAppUser(actorOf(req), req.body)),
  );
}
