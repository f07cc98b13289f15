import { describe, expect, it } from 'vitest';
import { PgDialect } from 'drizzle-orm/pg-core';
import { inScope, scopeSql } from '../../src/platform/scope.js';
import { merchantPaymentReview } from '../../src/modules/money/tables.js';

const dialect = new PgDialect();

describe('the territory predicate (platform/scope)', () => {
  it('inScope passes a scope as one text[] parameter, also when empty (a bare array would expand to a row or to `()`)', () => {
    for (const scope of [['t1', 't2'], ['t1'], []]) {
      const q = dialect.sqlToQuery(inScope(merchantPaymentReview.territoryId, scope));
      expect(q.sql).toBe('"merchant_payment_review"."territory_id" = ANY($1::text[])');
      expect(q.params).toEqual([scope]);
    }
  });

  it('an unscoped caller (null) matches every row', () => {
    expect(dialect.sqlToQuery(inScope(merchantPaymentReview.territoryId, null)).sql).toBe('true');
  });

  it('scopeSql is the same predicate for SQL text', () => {
    expect(scopeSql('r.territory_id', 3)).toBe('($3::text[] IS NULL OR r.territory_id = ANY($3::text[]))');
  });
});
