import type { Schemas } from './api';
import { getLang, t } from './i18n';

/** Settings whose values are a closed list: shown as selects with labels in the page's language, never free text. */

type Country = NonNullable<Schemas['UpdateSettingsRequest']['default_country']>;
type Strategy = NonNullable<Schemas['UpdateLogisticsSettingsRequest']['assignment_strategy']>;
type Policy = NonNullable<Schemas['UpdateLogisticsSettingsRequest']['failed_delivery_policy']>;

/** The countries the API accepts (its `default_country` enum; tsc fails below when the two lists differ). */
const COUNTRIES = [
  'AC', 'AD', 'AE', 'AF', 'AG', 'AI', 'AL', 'AM', 'AO', 'AR', 'AS', 'AT', 'AU', 'AW', 'AX', 'AZ', 'BA', 'BB', 'BD', 'BE',
  'BF', 'BG', 'BH', 'BI', 'BJ', 'BL', 'BM', 'BN', 'BO', 'BQ', 'BR', 'BS', 'BT', 'BW', 'BY', 'BZ', 'CA', 'CC', 'CD', 'CF',
  'CG', 'CH', 'CI', 'CK', 'CL', 'CM', 'CN', 'CO', 'CR', 'CU', 'CV', 'CW', 'CX', 'CY', 'CZ', 'DE', 'DJ', 'DK', 'DM', 'DO',
  'DZ', 'EC', 'EE', 'EG', 'EH', 'ER', 'ES', 'ET', 'FI', 'FJ', 'FK', 'FM', 'FO', 'FR', 'GA', 'GB', 'GD', 'GE', 'GF', 'GG',
  'GH', 'GI', 'GL', 'GM', 'GN', 'GP', 'GQ', 'GR', 'GT', 'GU', 'GW', 'GY', 'HK', 'HN', 'HR', 'HT', 'HU', 'ID', 'IE', 'IL',
  'IM', 'IN', 'IO', 'IQ', 'IR', 'IS', 'IT', 'JE', 'JM', 'JO', 'JP', 'KE', 'KG', 'KH', 'KI', 'KM', 'KN', 'KP', 'KR', 'KW',
  'KY', 'KZ', 'LA', 'LB', 'LC', 'LI', 'LK', 'LR', 'LS', 'LT', 'LU', 'LV', 'LY', 'MA', 'MC', 'MD', 'ME', 'MF', 'MG', 'MH',
  'MK', 'ML', 'MM', 'MN', 'MO', 'MP', 'MQ', 'MR', 'MS', 'MT', 'MU', 'MV', 'MW', 'MX', 'MY', 'MZ', 'NA', 'NC', 'NE', 'NF',
  'NG', 'NI', 'NL', 'NO', 'NP', 'NR', 'NU', 'NZ', 'OM', 'PA', 'PE', 'PF', 'PG', 'PH', 'PK', 'PL', 'PM', 'PR', 'PS', 'PT',
  'PW', 'PY', 'QA', 'RE', 'RO', 'RS', 'RU', 'RW', 'SA', 'SB', 'SC', 'SD', 'SE', 'SG', 'SH', 'SI', 'SJ', 'SK', 'SL', 'SM',
  'SN', 'SO', 'SR', 'SS', 'ST', 'SV', 'SX', 'SY', 'SZ', 'TA', 'TC', 'TD', 'TG', 'TH', 'TJ', 'TK', 'TL', 'TM', 'TN', 'TO',
  'TR', 'TT', 'TV', 'TW', 'TZ', 'UA', 'UG', 'US', 'UY', 'UZ', 'VA', 'VC', 'VE', 'VG', 'VI', 'VN', 'VU', 'WF', 'WS', 'XK',
  'YE', 'YT', 'ZA', 'ZM', 'ZW',
] as const satisfies readonly Country[];
type MissingCountry = Exclude<Country, (typeof COUNTRIES)[number]>;
export const countriesComplete: [MissingCountry] extends [never] ? true : false = true;

const STRATEGIES = ['nearest', 'least_loaded'] as const satisfies readonly Strategy[];
const POLICIES = ['return_to_merchant', 'close'] as const satisfies readonly Policy[];
export const strategiesComplete: [Exclude<Strategy, (typeof STRATEGIES)[number]>] extends [never] ? true : false = true;
export const policiesComplete: [Exclude<Policy, (typeof POLICIES)[number]>] extends [never] ? true : false = true;

export interface Choice {
  value: string;
  text: string;
}

function countryName(code: string): string {
  try {
    const name = new Intl.DisplayNames([getLang() === 'es' ? 'es' : 'en'], { type: 'region' }).of(code);
    return name && name !== code ? `${name} (${code})` : code;
  } catch {
    return code;
  }
}

/** The options of a setting with a closed list of values, or null for a free one. */
export function choicesOf(field: string): Choice[] | null {
  if (field === 'default_country') return COUNTRIES.map((c) => ({ value: c, text: countryName(c) })).sort((a, b) => a.text.localeCompare(b.text, getLang()));
  if (field === 'assignment_strategy') return STRATEGIES.map((v) => ({ value: v, text: t(`strategy_${v}`) }));
  if (field === 'failed_delivery_policy') return POLICIES.map((v) => ({ value: v, text: t(`policy_${v}`) }));
  return null;
}
