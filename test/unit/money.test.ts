import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/platform/errors.js';
import {
  assertMoneyInRange,
  formatMoney,
  maxMoney,
  minMoney,
  money,
  MONEY_MAX,
  MONEY_PATTERN,
  sumMoney,
  toCents,
} from '../../src/platform/money.js';
import { platformCollects, postingsFor, summarize } from '../../src/modules/money/service/ledger.js';
import { effectiveCashLimit, underCashLimit } from '../../src/modules/money/service/cash.js';
import { maskAccountNumber } from '../../src/modules/money/service/payment-profile.js';

/** Money arithmetic and the money module's rules, without HTTP or a database. */

describe('money arithmetic', () => {
  it('is decimal: 0.1 + 0.2 is 0.30, and a sum of many cents is exact', () => {
    expect(formatMoney(sumMoney(['0.10', '0.20']))).toBe('0.30');
    expect(formatMoney(sumMoney(Array.from({ length: 1000 }, () => '0.01')))).toBe('10.00');
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -1_000_000, max: 1_000_000 }), { maxLength: 50 }), (cents) => {
        const asText = cents.map((c) => (c / 100).toFixed(2));
        expect(formatMoney(sumMoney(asText))).toBe((cents.reduce((a, b) => a + b, 0) / 100).toFixed(2));
      }),
    );
  });

  it('rounds half-up to cents, also for negative amounts (away from zero)', () => {
    expect(formatMoney('2.345')).toBe('2.35');
    expect(formatMoney('2.344')).toBe('2.34');
    expect(formatMoney('0.005')).toBe('0.01');
    expect(formatMoney('-2.345')).toBe('-2.35');
    expect(toCents(money('1.999')).toFixed(2)).toBe('2.00');
    expect(formatMoney(money(7))).toBe('7.00');
  });

  it('refuses a fractional JavaScript number (binary floats never become money); integers and strings are exact', () => {
    expect(() => money(0.1)).toThrow(/strings/);
    expect(money(12).toFixed(2)).toBe('12.00');
    expect(money('12.3').toFixed(2)).toBe('12.30');
  });

  it('keeps to numeric(12,2): the pattern and the range agree', () => {
    const pattern = new RegExp(MONEY_PATTERN);
    for (const ok of ['0', '0.5', '12.34', '-7.00', '9999999999.99']) expect(pattern.test(ok), ok).toBe(true);
    for (const bad of ['1.234', '12345678901', '1e3', '.5', '1,50', ' 1']) expect(pattern.test(bad), bad).toBe(false);
    expect(() => assertMoneyInRange(MONEY_MAX)).not.toThrow();
    expect(() => assertMoneyInRange(MONEY_MAX.negated())).not.toThrow();
    expect(() => assertMoneyInRange(MONEY_MAX.plus('0.01'), 'total')).toThrow(AppError);
    try {
      assertMoneyInRange(money('10000000000'), 'total');
    } catch (e) {
      expect(e).toMatchObject({ status: 422, code: 'MONEY_OUT_OF_RANGE' });
      expect((e as Error).message).toContain('total');
    }
  });

  it('min and max pick by value', () => {
    expect(minMoney(money('2.50'), money('10')).toFixed(2)).toBe('2.50');
    expect(maxMoney(money('-1'), money('0')).toFixed(2)).toBe('0.00');
  });
});

describe('wallet entries of a delivered order (postingsFor)', () => {
  const cases: [string, Parameters<typeof postingsFor>[0], string, [string, string][]][] = [
    [
      'platform',
      { paymentDestination: 'platform', subtotal: '100.00', discountTotal: '10.00', deliveryFee: '15.00', total: '105.00' },
      '10.00',
      [
        ['sale_credit', '105.00'],
        ['platform_commission', '-9.00'],
        ['delivery_fee_debit', '-15.00'],
      ],
    ],
    [
      'merchant_direct',
      { paymentDestination: 'merchant_direct', subtotal: '80.00', discountTotal: '5.00', deliveryFee: '10.00', total: '85.00' },
      '10.00',
      [
        ['platform_commission', '-7.50'],
        ['delivery_fee_debit', '-10.00'],
      ],
    ],
    [
      'cash, half-up rounding',
      { paymentDestination: 'cash', subtotal: '45.55', discountTotal: '0.00', deliveryFee: '12.00', total: '57.55' },
      '12.50',
      [
        ['platform_commission', '-5.69'],
        ['delivery_fee_debit', '-12.00'],
      ],
    ],
    [
      '0.025 rounds up to 0.03',
      { paymentDestination: 'cash', subtotal: '0.20', discountTotal: '0.00', deliveryFee: '1.00', total: '1.20' },
      '12.50',
      [
        ['platform_commission', '-0.03'],
        ['delivery_fee_debit', '-1.00'],
      ],
    ],
    [
      'free delivery, no commission: only the sale credit',
      { paymentDestination: 'platform', subtotal: '20.00', discountTotal: '0.00', deliveryFee: '0.00', total: '20.00' },
      '0.00',
      [['sale_credit', '20.00']],
    ],
  ];
  for (const [name, facts, pct, expected] of cases) {
    it(name, () => expect(postingsFor(facts, pct).map((p) => [p.entryType, p.amount])).toEqual(expected));
  }
});

describe("who collects an order's payment", () => {
  it("the platform for platform payments and for cash its driver takes; never for merchant_direct or the merchant's own cash", () => {
    expect(platformCollects({ paymentDestination: 'platform' })).toBe(true);
    expect(platformCollects({ paymentDestination: 'cash', collectedBy: 'driver' })).toBe(true);
    expect(platformCollects({ paymentDestination: 'cash', collectedBy: 'merchant' })).toBe(false);
    expect(platformCollects({ paymentDestination: 'merchant_direct' })).toBe(false);
  });

  it('the merchant nets subtotal − discount − commission whoever collects (counting what he collected himself)', () => {
    const base = { subtotal: '80.00', discountTotal: '5.00', deliveryFee: '10.00', total: '85.00' } as const;
    for (const facts of [
      { ...base, paymentDestination: 'platform' as const },
      { ...base, paymentDestination: 'cash' as const, collectedBy: 'driver' as const },
      { ...base, paymentDestination: 'cash' as const, collectedBy: 'merchant' as const },
      { ...base, paymentDestination: 'merchant_direct' as const },
    ]) {
      const entries = sumMoney(postingsFor(facts, '10.00').map((p) => p.amount));
      const collectedHimself = platformCollects(facts) ? money(0) : money(facts.total);
      expect(formatMoney(entries.plus(collectedHimself)), JSON.stringify(facts)).toBe('67.50');
    }
  });
});

describe('wallet summary', () => {
  it('available = balance − debt net − pending; a negative rest is debt, never a negative available', () => {
    expect(summarize('100.00', '0.00', 'BOB')).toMatchObject({ balance: '100.00', available: '100.00', debt: '0.00', credit: '0.00' });
    expect(summarize('100.00', '-30.00', 'BOB')).toMatchObject({ available: '130.00', debt: '30.00', payable: '130.00' });
    expect(summarize('50.00', '0.00', 'BOB', '20.00')).toMatchObject({ pending: '20.00', available: '30.00' });
    // A refund larger than what was available: the shortfall is debt.
    expect(summarize('-15.00', '0.00', 'BOB')).toMatchObject({ available: '0.00', debt: '15.00', payable: '0.00' });
    expect(summarize('10.00', '25.00', 'USD')).toMatchObject({ available: '0.00', debt: '0.00', credit: '10.00', currency: 'USD' });
  });

  it('never reports a negative available or payable, and keeps balance = available + pending + net', () => {
    const cents = fc.integer({ min: -10_000_000, max: 10_000_000 }).map((c) => (c / 100).toFixed(2));
    fc.assert(
      fc.property(cents, cents, cents, (balance, debtNet, pending) => {
        const s = summarize(balance, debtNet, 'BOB', pending);
        expect(money(s.available).isNegative() && !money(s.available).isZero()).toBe(false);
        expect(s.payable).toBe(s.available);
        const net = money(s.credit).minus(s.debt);
        expect(formatMoney(money(s.available).plus(s.pending).plus(net))).toBe(formatMoney(money(balance)));
      }),
    );
  });
});

describe("a driver's cash limit", () => {
  it("his own limit, else the organization's, else none", () => {
    expect(effectiveCashLimit({ cash_limit: '200.00' }, '500.00')).toBe('200.00');
    expect(effectiveCashLimit({ cash_limit: null }, '500.00')).toBe('500.00');
    expect(effectiveCashLimit({ cash_limit: null }, null)).toBeNull();
  });

  it('at or over the limit he is offered no cash order; without a limit always', () => {
    expect(underCashLimit('199.99', '200.00')).toBe(true);
    expect(underCashLimit('200.00', '200.00')).toBe(false);
    expect(underCashLimit('250.00', '200.00')).toBe(false);
    expect(underCashLimit('1000000.00', null)).toBe(true);
  });
});

describe('bank account numbers', () => {
  it('are kept as **** and the last four characters, spaces and dashes dropped', () => {
    expect(maskAccountNumber('1234 5678-9012')).toBe('****9012');
    expect(maskAccountNumber('12')).toBe('****12');
  });
});
