import { getCountries, isSupportedCountry, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import type { Tx } from './db/index.js';
import { AppError } from './errors.js';
import { defaultCountryOf } from './repo.js';

/** The country of numbers typed without a country code when an organization has not chosen one. */
export const DEFAULT_PHONE_COUNTRY = 'BO';

/** ISO 3166-1 alpha-2 codes libphonenumber knows (the organization setting `default_country`). */
export const PHONE_COUNTRIES: string[] = getCountries();

export const isPhoneCountry = (c: unknown): c is CountryCode => typeof c === 'string' && isSupportedCountry(c);

/**
 * A phone number as typed (`71234567`, `+591 7123-4567`, `(212) 555-0100`) in E.164 (`+59171234567`), read with
 * `country` when it has no `+` country code. libphonenumber-js decides what is a valid number for its country
 * (length and number ranges): anything else is 400 INVALID_PHONE on `field`.
 */
export function toE164(raw: string, country: string, field = 'phone'): string {
  const parsed = parsePhoneNumberFromString(raw.trim(), isPhoneCountry(country) ? country : DEFAULT_PHONE_COUNTRY);
  if (!parsed || !parsed.isValid()) {
    throw new AppError(
      400,
      'INVALID_PHONE',
      `${field} is not a valid phone number${raw.trim().startsWith('+') ? '' : ` for ${country} (or give its +country code)`}`,
      [{ field, message: `not a valid phone number (E.164, or national for ${country})` }],
    );
  }
  return parsed.number;
}

/** The organization's `default_country` (settings), read in the caller's transaction. */
export async function phoneCountryOf(tx: Tx, organizationId: string): Promise<string> {
  return (await defaultCountryOf(tx, organizationId)) ?? DEFAULT_PHONE_COUNTRY;
}

/**
 * The one place phones are normalised before they are stored: the given fields of `input` that hold a string are
 * replaced by their E.164 form (the organization's default country for national numbers); null and absent fields
 * stay as they are. Returns a copy.
 */
export async function normalizePhones<T extends object>(
  tx: Tx,
  organizationId: string,
  input: T,
  fields: readonly (keyof T & string)[],
): Promise<T> {
  const present = fields.filter((f) => typeof input[f] === 'string');
  if (present.length === 0) return input;
  const country = await phoneCountryOf(tx, organizationId);
  const out = { ...input } as Record<string, unknown>;
  for (const f of present) out[f] = toE164(out[f] as string, country, f);
  return out as T;
}

/**
 * Candidates for a phone typed at login, where the organization may not be known: the E.164 form under each
 * country in use (plus the text as typed, for numbers stored before normalisation).
 */
export function phoneCandidates(raw: string, countries: string[]): string[] {
  const out = new Set<string>([raw.trim()]);
  for (const c of countries.length ? countries : [DEFAULT_PHONE_COUNTRY]) {
    const parsed = parsePhoneNumberFromString(raw.trim(), isPhoneCountry(c) ? c : DEFAULT_PHONE_COUNTRY);
    if (parsed?.isValid()) out.add(parsed.number);
  }
  return [...out];
}
