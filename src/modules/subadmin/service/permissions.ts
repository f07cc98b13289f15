import { SUBADMIN_PERMISSION_KEYS, type PermissionKey } from '../../../platform/auth.js';
import { AppError } from '../../../platform/errors.js';
import { PercentPattern, type Permissions } from '../schemas.js';

/** SPEC defaults: every key true except the money decisions `payments_review_decide` and `cash_remittances_record`. */
const OFF_BY_DEFAULT: readonly PermissionKey[] = ['payments_review_decide', 'cash_remittances_record'];
export const DEFAULT_PERMISSIONS: Permissions = Object.fromEntries(
  SUBADMIN_PERMISSION_KEYS.map((k) => [k, !OFF_BY_DEFAULT.includes(k)]),
) as Permissions;

/** Stored permissions with every missing key filled from the defaults (unknown keys dropped). */
export function fillPermissions(
  stored: Partial<Record<string, unknown>> | null | undefined,
  defaults: Permissions = DEFAULT_PERMISSIONS,
): Permissions {
  const out = { ...defaults };
  for (const k of SUBADMIN_PERMISSION_KEYS) if (typeof stored?.[k] === 'boolean') out[k] = stored[k] as boolean;
  return out;
}

const PERCENT = new RegExp(PercentPattern);

/** Bounds as numbers in cents (exact): both or neither, both within 0..100 and min ≤ max (else 422 COMMISSION_BOUNDS_INVALID). */
export function checkBounds(min: string | null, max: string | null): void {
  if ((min === null) !== (max === null)) {
    const missing = min === null ? 'commission_min_percent' : 'commission_max_percent';
    throw AppError.unprocessable(
      'Commission bounds come in pairs: send both commission_min_percent and commission_max_percent, or neither',
      'COMMISSION_BOUNDS_INVALID',
      [{ field: missing, message: 'required with the other bound' }],
    );
  }
  const errors: { field: string; message: string }[] = [];
  for (const [field, v] of [
    ['commission_min_percent', min],
    ['commission_max_percent', max],
  ] as const) {
    if (v !== null && (!PERCENT.test(v) || cents(v) > 10_000))
      errors.push({ field, message: 'must be a percentage between 0 and 100 with at most 2 decimals' });
  }
  if (errors.length) throw AppError.unprocessable('Commission bounds must be within 0..100', 'COMMISSION_BOUNDS_INVALID', errors);
  if (min !== null && max !== null && cents(min) > cents(max)) {
    throw AppError.unprocessable('commission_min_percent must not exceed commission_max_percent', 'COMMISSION_BOUNDS_INVALID', [
      { field: 'commission_min_percent', message: 'greater than commission_max_percent' },
    ]);
  }
}

/** A percentage string ("12.5") as integer hundredths (1250): exact comparisons without floats. */
export function cents(v: string): number {
  const [i, f = ''] = v.split('.');
  return Number(i) * 100 + Number((f + '00').slice(0, 2));
}
