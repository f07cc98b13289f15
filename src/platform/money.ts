import { Decimal } from 'decimal.js';
import { AppError } from './errors.js';

/** Money: decimals with 2 fraction digits, at most 12 digits in all (numeric(12,2)); never a binary float. */
export const MONEY_PATTERN = '^-?\\d{1,10}(\\.\\d{1,2})?$';
export const MONEY_MAX = new Decimal('9999999999.99');

const D = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });
export type Money = Decimal;

export function money(value: string | number | Decimal): Decimal {
  if (typeof value === 'number' && !Number.isInteger(value)) {
    // Integers are exact; fractional numbers must arrive as strings.
    throw new Error('money: pass fractional amounts as strings');
  }
  return new D(value);
}

export const ZERO = new D(0);

/** Rounds half-up to cents. */
export const toCents = (d: Decimal): Decimal => d.toDecimalPlaces(2, Decimal.ROUND_HALF_UP);

/** "12.50"-style string, as stored in SQL and sent in JSON. */
export function formatMoney(d: Decimal | string): string {
  const v = typeof d === 'string' ? new D(d) : d;
  return toCents(v).toFixed(2);
}

export function sumMoney(values: (Decimal | string)[]): Decimal {
  return values.reduce<Decimal>((acc, v) => acc.plus(v), new D(0));
}

export function assertMoneyInRange(d: Decimal, field = 'amount'): void {
  if (d.abs().gt(MONEY_MAX)) {
    throw AppError.unprocessable(`${field} exceeds the money range (12 digits, 2 decimals)`, 'MONEY_OUT_OF_RANGE');
  }
}

export function minMoney(a: Decimal, b: Decimal): Decimal {
  return a.lt(b) ? a : b;
}

export function maxMoney(a: Decimal, b: Decimal): Decimal {
  return a.gt(b) ? a : b;
}
