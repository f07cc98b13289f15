import { PHONE_COUNTRIES } from './phone.js';
import { Type, type ObjectOptions, type SchemaOptions, type Static, type TProperties, type TSchema, type TUnion } from '@sinclair/typebox';
import { MONEY_PATTERN } from './money.js';

/** A request/response object that rejects unknown fields. */
export const Strict = <T extends TProperties>(props: T, opts: ObjectOptions = {}) =>
  Type.Object(props, { additionalProperties: false, ...opts });

export const Id = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' });
export const IdParams = Strict({ id: Id });
/** An id field with a description (e.g. a rule the schema cannot express, with its error code). */
export const IdWith = (description: string) => Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$', description });

/**
 * Exactly one of the alternatives (JSON Schema `oneOf`): for bodies of mutually exclusive shapes, each a `Strict`
 * object so that no value fits two. Generated clients get a union of named shapes.
 */
export const OneOf = <T extends TSchema[]>(schemas: [...T], opts: SchemaOptions = {}) =>
  Type.Unsafe<Static<TUnion<T>>>({ ...opts, oneOf: schemas });

/** A new password: the length here (400 VALIDATION_FAILED), the rest of identity's passwordProblems is 400 WEAK_PASSWORD. */
export const NewPassword = Type.String({
  minLength: 10,
  maxLength: 200,
  description:
    '10 to 200 characters (else 400 VALIDATION_FAILED); a common password, one repeated character or one containing the email name is 400 WEAK_PASSWORD',
});

export const Money = Type.String({
  pattern: MONEY_PATTERN,
  description: 'decimal string with at most 2 fraction digits, e.g. "12.50"',
  examples: ['12.50'],
});
export const NonNegativeMoney = Type.String({ pattern: '^\\d{1,10}(\\.\\d{1,2})?$', description: 'decimal string >= 0, e.g. "12.50"' });
export const Currency = Type.String({ pattern: '^[A-Z]{3}$', default: 'BOB', description: 'ISO 4217 code' });
/** An ISO 4217 code the runtime knows (the list is in the document, so clients see what the server accepts). */
export const KnownCurrency = Type.String({ enum: Intl.supportedValuesOf('currency'), description: 'ISO 4217 code' });
/** An IANA time zone the runtime knows. */
export const TimeZone = Type.String({
  enum: [...new Set([...Intl.supportedValuesOf('timeZone'), 'UTC'])],
  description: 'IANA time zone, e.g. America/La_Paz',
});
/**
 * RFC 3339 date-time as the server accepts it: `T` separator, seconds 00–59 (no leap second: a JavaScript Date cannot
 * hold one), optional fraction, `Z` or an offset within
 * ±14:59 (PostgreSQL refuses larger offsets; real zones span -12:00..+14:00). The Ajv `date-time` format of the app
 * checks this pattern plus the calendar (src/app.ts), so every `format: 'date-time'` field is exactly this strict, and
 * the OpenAPI document writes the pattern next to each such format.
 */
export const DATE_TIME_PATTERN =
  '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9])(\\.[0-9]{1,9})?([Zz]|[+-](0[0-9]|1[0-4]):[0-5][0-9])$';
const DATE_TIME_RE = new RegExp(DATE_TIME_PATTERN);
const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** The `date-time` format of the app's validators: the pattern above plus a real calendar day. */
export function isDateTime(s: string): boolean {
  if (!DATE_TIME_RE.test(s)) return false;
  const [y, m, d] = [Number(s.slice(0, 4)), Number(s.slice(5, 7)), Number(s.slice(8, 10))];
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  return y >= 1 && d <= (m === 2 && !leap ? 28 : DAYS[m - 1]);
}

/** ISO 8601 with offset; handlers may return Date objects, the serializer formats them. */
export const Timestamp = Type.Unsafe<Date | string>({ type: 'string', format: 'date-time' });
/** A timestamp in a query string or body (filters such as `from`/`to`): see DATE_TIME_PATTERN. */
export const DateTimeParam = (description?: string) =>
  Type.String({ format: 'date-time', pattern: DATE_TIME_PATTERN, ...(description ? { description } : {}) });
/** An enum: a union of string literals (its TypeScript type follows with `Static`), described when a description is given. */
export const Literals = <T extends string>(values: readonly T[], description?: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    description ? { description } : {},
  );
export const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);
export const ShortText = (max = 200, min = 1) => Type.String({ minLength: min, maxLength: max });
export const Email = Type.String({ format: 'email', maxLength: 254 });
/** ISO 3166-1 alpha-2 country of phone numbers (the organization's `default_country`). */
export const PhoneCountry = Type.String({ enum: PHONE_COUNTRIES, description: 'ISO 3166-1 alpha-2 country code, e.g. BO' });
/**
 * A phone number as people type it: digits with an optional leading `+`, spaces, dots, dashes and parentheses. The
 * services store it in E.164 (`+59171234567`), national numbers read with the organization's `default_country`
 * (src/platform/phone.ts); a number that is not valid there is 400 INVALID_PHONE.
 */
export const Phone = Type.String({
  pattern: '^\\+?[0-9(][0-9 ().-]{4,22}[0-9]$',
  maxLength: 24,
  description:
    "phone number, stored in E.164 (e.g. +59171234567); without a +country code it is read as a number of the organization's default_country",
});

export const Problem = Type.Object(
  {
    type: Type.String({ description: 'URI of the problem type (`about:blank` for 5xx)' }),
    title: Type.String({ description: 'HTTP status text' }),
    status: Type.Integer({ description: 'HTTP status code' }),
    detail: Type.String({ description: 'human-readable explanation of this occurrence' }),
    code: Type.String({
      description:
        'stable UPPER_SNAKE error code, e.g. VALIDATION_FAILED, MALFORMED_JSON, UNAUTHORIZED, FORBIDDEN, NOT_FOUND, METHOD_NOT_ALLOWED, CONFLICT, INVALID_TRANSITION, DUPLICATE, UNPROCESSABLE, RATE_LIMITED, FUTURE_INTEGRATION_NOT_RELEASED, INTERNAL_ERROR',
    }),
    request_id: Type.String({ description: 'the `x-request-id` of the response' }),
    errors: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), { description: 'the invalid fields (400)' }),
    ),
  },
  { additionalProperties: true, description: 'RFC 9457 problem details, sent as `application/problem+json`' },
);

/** 429 answers: problem+json with a Retry-After header (seconds). */
export const TooMany = Type.Object(Problem.properties, {
  additionalProperties: true,
  description: 'RATE_LIMITED or LOGIN_THROTTLED (problem+json); the Retry-After header gives the seconds to wait',
});

export const PageQueryProps = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9_-]{0,86}$',
      description: 'opaque: the `next_cursor` of the previous page; a value this API did not issue is 400 VALIDATION_FAILED',
    }),
  ),
};

export const Page = <T extends TSchema>(item: T) => Type.Object({ data: Type.Array(item), next_cursor: Nullable(Type.String()) });

export const Ok = Type.Object({ ok: Type.Boolean() });
