import { Type, type Static } from '@sinclair/typebox';
import { APP_ROLES } from '../../platform/auth.js';
import { Email, Id, NewPassword, Nullable, OneOf, PageQueryProps, Phone, ShortText, Strict, Timestamp } from '../../platform/schemas.js';

export const Role = Type.Union(APP_ROLES.map((r) => Type.Literal(r)));
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

export const Tokens = Type.Object({
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
export const LoginBody = OneOf([LoginWithEmail, LoginWithPhone], { description: 'exactly one of `email` or `phone`, with the password' });

/** A new user needs an email, a phone or both. */
const newUserFields = { password: NewPassword, display_name: ShortText(120), role: Role, dispatch: Type.Optional(Type.Boolean()) };
export const NewUserBody = Type.Union(
  [
    Strict({ email: Email, phone: Type.Optional(Phone), ...newUserFields }, { title: 'NewUserByEmail' }),
    Strict({ email: Type.Optional(Email), phone: Phone, ...newUserFields }, { title: 'NewUserByPhone' }),
  ],
  { description: '`email`, `phone` or both; a user with the same email or phone in the organization is 409 DUPLICATE_USER' },
);

export const MeOut = Type.Object({
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
});

export const RefreshTokenBody = Strict({ refresh_token: Type.String({ minLength: 10, maxLength: 200 }) });

export const UserListQuery = Strict({
  ...PageQueryProps,
  role: Type.Optional(Role),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'part of the email or display name, matched literally (case-insensitive)',
    }),
  ),
});

/** Deactivation and reactivation: an optional reason, kept in the audit entry. */
export const UserStatusBody = Strict({ reason: Type.Optional(ShortText(500)) });

/** A user as the API shows it. */
export type PublicUser = Static<typeof UserOut>;
