import { Type, type TSchema, type TProperties, type ObjectOptions } from '@sinclair/typebox';
import { MONEY_PATTERN } from './money.js';

/** A request/response object that rejects unknown fields. */
export const Strict = <T extends TProperties>(props: T, opts: ObjectOptions = {}) =>
  Type.Object(props, { additionalProperties: false, ...opts });

export const Id = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' });
export const IdParams = Strict({ id: Id });

export const Money = Type.String({ pattern: MONEY_PATTERN, description: 'decimal string with at most 2 fraction digits, e.g. "12.50"', examples: ['12.50'] });
export const NonNegativeMoney = Type.String({ pattern: '^\\d{1,10}(\\.\\d{1,2})?$', description: 'decimal string >= 0, e.g. "12.50"' });
export const Currency = Type.String({ pattern: '^[A-Z]{3}$', default: 'BOB', description: 'ISO 4217 code' });
/** ISO 8601 with offset; handlers may return Date objects, the serializer formats them. */
export const Timestamp = Type.Unsafe<Date | string>({ type: 'string', format: 'date-time' });
export const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);
export const ShortText = (max = 200, min = 1) => Type.String({ minLength: min, maxLength: max });
export const Email = Type.String({ format: 'email', maxLength: 254 });
export const Phone = Type.String({ pattern: '^\\+?[0-9]{6,15}$', description: 'digits, optional leading +' });

export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: 'stable UPPER_SNAKE error code' }),
    request_id: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
  },
  { additionalProperties: true, description: 'RFC 9457 problem details' },
);

/** 429 answers: problem+json with a Retry-After header (seconds). */
export const TooMany = Type.Object(Problem.properties, {
  additionalProperties: true,
  description: 'RATE_LIMITED or LOGIN_THROTTLED (problem+json); the Retry-After header gives the seconds to wait',
});

export const PageQueryProps = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
};

export const Page = <T extends TSchema>(item: T) =>
  Type.Object({ data: Type.Array(item), next_cursor: Nullable(Type.String()) });

export const Ok = Type.Object({ ok: Type.Boolean() });
