/**
 * The documented columns of each import kind and the pure rules of a row: the header check and the parsing of each
 * cell into the body the one-record API takes (POST /trips, POST /merchant/delivery-express), every problem named by
 * its column. The records' own rules (merchant approved, territory, tariff) are checked by creating them.
 */
import { AppError } from '../../../platform/errors.js';
import { MONEY_MAX, money } from '../../../platform/money.js';
import { toE164 } from '../../../platform/phone.js';
import { isDateTime } from '../../../platform/schemas.js';
import type { LonLat } from '../../../platform/geo.js';
import type { ImportKind, RowError } from '../schemas.js';

export interface ColumnDef {
  name: string;
  required: boolean;
  /** What the cell holds (the documentation and the template's notes). */
  description: string;
  /** The value of the template's example row. */
  example: string;
}

const col = (name: string, required: boolean, description: string, example: string): ColumnDef => ({
  name,
  required,
  description,
  example,
});

/** Coordinates are required unless the deployment has a geocoder (see docs/IMPORTS.md). */
export const COLUMNS: Record<ImportKind, ColumnDef[]> = {
  trips: [
    col(
      'external_ref',
      true,
      'your reference of the row, unique per organization and merchant: a row imported again is reported as a duplicate',
      'PED-1001',
    ),
    col('merchant_id', false, 'the merchant the trip is for (an approved merchant of the organization)', ''),
    col('pickup_address', true, 'pickup address (up to 300 characters)', 'Av. 16 de Julio 1490, La Paz'),
    col('pickup_lat', true, 'pickup latitude, decimal degrees (WGS 84)', '-16.4990'),
    col('pickup_lon', true, 'pickup longitude, decimal degrees (WGS 84)', '-68.1335'),
    col('dropoff_address', true, 'delivery address (up to 300 characters)', 'Calle Jaén 711, La Paz'),
    col('dropoff_lat', true, 'delivery latitude', '-16.4955'),
    col('dropoff_lon', true, 'delivery longitude', '-68.1371'),
    col('recipient_name', false, 'who receives the package (up to 120 characters)', 'Ana Mamani'),
    col(
      'recipient_phone',
      false,
      "the recipient's phone (E.164, or national for the organization's country): the tracking link goes there",
      '+59171234567',
    ),
    col('delivery_fee', false, 'what the delivery costs (decimal, e.g. 12.50); default: the logistics settings', '12.50'),
    col('driver_earning', false, "the driver's earning (decimal); default: the logistics settings", '8.00'),
    col('notes', false, 'notes for the driver (up to 1000 characters)', 'Timbre 2'),
    col('deliver_after', false, 'a scheduled window start (ISO 8601 date-time; needs deliver_before)', ''),
    col('deliver_before', false, 'a scheduled window end: the promise (ISO 8601 date-time, in the future)', ''),
  ],
  express_requests: [
    col(
      'external_ref',
      true,
      'your reference of the row, unique per merchant: a row imported again is reported as a duplicate',
      'EXP-2001',
    ),
    col('customer_name', true, 'who receives the package (up to 120 characters)', 'Ana Mamani'),
    col('customer_phone', false, 'his phone (E.164, or national for the organization country)', '71234567'),
    col('dropoff_address', true, 'delivery address (up to 300 characters)', 'Calle Jaén 711, La Paz'),
    col('dropoff_lat', true, 'delivery latitude, decimal degrees (WGS 84)', '-16.4955'),
    col('dropoff_lon', true, 'delivery longitude, decimal degrees (WGS 84)', '-68.1371'),
    col('branch_id', false, "pickup at this branch of the merchant; else pickup_* below, else the merchant's location", ''),
    col('pickup_address', false, 'pickup address (with pickup_lat and pickup_lon)', ''),
    col('pickup_lat', false, 'pickup latitude', ''),
    col('pickup_lon', false, 'pickup longitude', ''),
    col('package_description', false, 'what is carried (up to 1000 characters)', 'Caja mediana'),
    col('declared_value', false, 'declared value of the package (decimal >= 0)', '150.00'),
  ],
};

/** The header of a file: every name a documented column of its kind, each once, the required ones present (else 422). */
export function checkHeader(kind: ImportKind, header: string[]): string[] {
  const names = header.map((h) => h.trim().toLowerCase());
  while (names.length && names[names.length - 1] === '') names.pop();
  const known = new Map(COLUMNS[kind].map((c) => [c.name, c]));
  const seen = new Set<string>();
  for (const [i, n] of names.entries()) {
    const where = `column ${i + 1}`;
    if (!n)
      throw new AppError(422, 'IMPORT_UNKNOWN_COLUMN', `The header has an empty ${where}`, [
        { field: where, message: 'empty column name' },
      ]);
    if (!known.has(n))
      throw new AppError(
        422,
        'IMPORT_UNKNOWN_COLUMN',
        `Unknown column '${header[i].trim()}' (${where}); the columns are listed in the template`,
        [{ field: header[i].trim(), message: `not a column of ${kind} imports` }],
      );
    if (seen.has(n)) throw new AppError(422, 'IMPORT_DUPLICATE_COLUMN', `Column '${n}' appears twice`, [{ field: n, message: 'repeated' }]);
    seen.add(n);
  }
  const missing = COLUMNS[kind].filter((c) => c.required && !seen.has(c.name)).map((c) => c.name);
  if (missing.length)
    throw new AppError(
      422,
      'IMPORT_MISSING_COLUMN',
      `Missing required column${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`,
      missing.map((m) => ({ field: m, message: 'required column missing' })),
    );
  return names;
}

/** What the rows need from outside: the organization's phone country and whether a geocoder fills missing coordinates. */
export interface RowRules {
  phoneCountry: string;
  geocoding: boolean;
}

/** A trip row, as POST /trips takes it (coordinates null: to be geocoded). */
export interface TripDraft {
  pickup: LonLat | null;
  pickup_address: string;
  dropoff: LonLat | null;
  dropoff_address: string;
  merchant_id?: string;
  recipient_name?: string;
  recipient_phone?: string;
  delivery_fee?: string;
  driver_earning?: string;
  notes?: string;
  deliver_after?: string;
  deliver_before?: string;
}

/** An express row, as POST /merchant/delivery-express takes it (dropoff null: to be geocoded). */
export interface ExpressDraft {
  customer_name: string;
  customer_phone?: string;
  dropoff_address: string;
  dropoff: LonLat | null;
  branch_id?: string;
  pickup_address?: string;
  pickup?: LonLat | null;
  package_description?: string;
  declared_value?: string;
}

export type Draft = TripDraft | ExpressDraft;

export interface ParsedRow {
  row: number;
  externalRef: string | null;
  draft: Draft | null;
  errors: RowError[];
}

const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Reads one row's cells (by column name); every problem is collected, none stops the others. */
export function parseRow(kind: ImportKind, row: number, cells: Record<string, string>, rules: RowRules): ParsedRow {
  const errors: RowError[] = [];
  const fail = (column: string | null, code: string, message: string) => {
    errors.push({ row, column, code, message });
    return undefined;
  };
  const raw = (c: string) => (cells[c] ?? '').trim();
  const text = (c: string, max: number, required = false): string | undefined => {
    const v = raw(c);
    if (!v) return required ? fail(c, 'REQUIRED', `${c} is required`) : undefined;
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(v)) return fail(c, 'INVALID_TEXT', `${c} holds control characters`);
    if (v.length > max) return fail(c, 'TOO_LONG', `${c} is longer than ${max} characters`);
    return v;
  };
  const id = (c: string) => {
    const v = raw(c);
    if (!v) return undefined;
    return ID_PATTERN.test(v) ? v : fail(c, 'INVALID_ID', `${c} is not an id`);
  };
  const amount = (c: string) => {
    const v = raw(c).replace(',', '.');
    if (!v) return undefined;
    if (!/^\d{1,10}(\.\d{1,2})?$/.test(v) || money(v).greaterThan(MONEY_MAX))
      return fail(c, 'INVALID_MONEY', `${c} must be a decimal amount >= 0 with at most 2 decimals (e.g. 12.50)`);
    return v;
  };
  const coordinate = (c: string, limit: number) => {
    const v = raw(c).replace(',', '.');
    if (!v) return null;
    const n = Number(v);
    if (!/^-?\d{1,3}(\.\d+)?$/.test(v) || !Number.isFinite(n) || Math.abs(n) > limit)
      return fail(c, 'INVALID_COORDINATE', `${c} must be a number between -${limit} and ${limit}`) ?? NaN;
    return n;
  };
  /** A point from two columns: both or neither (then geocoded when a geocoder is configured, else an error if required). */
  const point = (prefix: string, required: boolean): LonLat | null | undefined => {
    const lat = coordinate(`${prefix}_lat`, 90);
    const lon = coordinate(`${prefix}_lon`, 180);
    if (Number.isNaN(lat) || Number.isNaN(lon)) return undefined;
    if (lat === null && lon === null) {
      if (!required || rules.geocoding) return null;
      fail(`${prefix}_lat`, 'REQUIRED', `${prefix}_lat and ${prefix}_lon are required (no geocoder is configured)`);
      return undefined;
    }
    if (lat === null) return fail(`${prefix}_lat`, 'REQUIRED', `${prefix}_lat is required with ${prefix}_lon`);
    if (lon === null) return fail(`${prefix}_lon`, 'REQUIRED', `${prefix}_lon is required with ${prefix}_lat`);
    return { lon, lat };
  };
  const phone = (c: string) => {
    const v = raw(c);
    if (!v) return undefined;
    try {
      return toE164(v, rules.phoneCountry, c);
    } catch (err) {
      return fail(c, 'INVALID_PHONE', err instanceof Error ? err.message : `${c} is not a phone number`);
    }
  };
  const dateTime = (c: string) => {
    const v = raw(c);
    if (!v) return undefined;
    return isDateTime(v)
      ? v
      : fail(c, 'INVALID_DATE_TIME', `${c} must be an ISO 8601 date-time with its offset (e.g. 2026-12-01T15:00:00-04:00)`);
  };

  const externalRef = text('external_ref', 100, true) ?? null;
  let draft: Draft;
  if (kind === 'trips') {
    const t: TripDraft = {
      merchant_id: id('merchant_id'),
      pickup_address: text('pickup_address', 300, true) ?? '',
      pickup: point('pickup', true) ?? null,
      dropoff_address: text('dropoff_address', 300, true) ?? '',
      dropoff: point('dropoff', true) ?? null,
      recipient_name: text('recipient_name', 120),
      recipient_phone: phone('recipient_phone'),
      delivery_fee: amount('delivery_fee'),
      driver_earning: amount('driver_earning'),
      notes: text('notes', 1000),
      deliver_after: dateTime('deliver_after'),
      deliver_before: dateTime('deliver_before'),
    };
    if (t.deliver_after && !t.deliver_before) fail('deliver_before', 'REQUIRED', 'deliver_before is required with deliver_after');
    draft = t;
  } else {
    const pickup = point('pickup', false);
    const e: ExpressDraft = {
      customer_name: text('customer_name', 120, true) ?? '',
      customer_phone: phone('customer_phone'),
      dropoff_address: text('dropoff_address', 300, true) ?? '',
      dropoff: point('dropoff', true) ?? null,
      branch_id: id('branch_id'),
      pickup_address: text('pickup_address', 300),
      pickup: pickup ?? null,
      package_description: text('package_description', 1000),
      declared_value: amount('declared_value'),
    };
    if (e.pickup && !e.pickup_address) fail('pickup_address', 'REQUIRED', 'pickup_address is required with pickup_lat and pickup_lon');
    draft = e;
  }
  return { row, externalRef, draft: errors.length ? null : draft, errors };
}

/** Refs repeated within one file: every repetition after the first is an error of its row. */
export function markRepeatedRefs(rows: ParsedRow[]): void {
  const first = new Map<string, number>();
  for (const r of rows) {
    if (!r.externalRef) continue;
    const seen = first.get(r.externalRef);
    if (seen === undefined) first.set(r.externalRef, r.row);
    else {
      r.errors.push({ row: r.row, column: 'external_ref', code: 'DUPLICATE_IN_FILE', message: `external_ref repeats row ${seen}` });
      r.draft = null;
    }
  }
}
