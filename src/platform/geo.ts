import { Type, type Static } from '@sinclair/typebox';
import { AppError, type FieldError } from './errors.js';

/** GeoJSON in the API; native `point` (x = lon, y = lat) and `polygon` in SQL. */
/**
 * `[longitude, latitude]`. OpenAPI 3.1 / JSON Schema 2020-12 form (`prefixItems`), not the draft-07 tuple form
 * (`items: [..]`) that 3.1 validators reject. The server's Ajv (draft-07) ignores `prefixItems` and applies `items`
 * to both members; `parsePoint`/`parseArea` then check the latitude range.
 */
export const Position = Type.Unsafe<[number, number]>({
  type: 'array',
  prefixItems: [
    { type: 'number', minimum: -180, maximum: 180, description: 'longitude' },
    { type: 'number', minimum: -90, maximum: 90, description: 'latitude' },
  ],
  items: { type: 'number', minimum: -180, maximum: 180 },
  minItems: 2,
  maxItems: 2,
  description: '[longitude, latitude] (WGS 84)',
});
export const GeoPoint = Type.Object(
  { type: Type.Literal('Point'), coordinates: Position },
  { additionalProperties: false, $id: undefined, description: 'GeoJSON Point' },
);
export type GeoPoint = Static<typeof GeoPoint>;

const Ring = Type.Array(Position, { minItems: 4, maxItems: 10_000 });
export const GeoPolygon = Type.Object(
  { type: Type.Literal('Polygon'), coordinates: Type.Array(Ring, { minItems: 1, maxItems: 100 }) },
  { additionalProperties: false },
);
export const GeoMultiPolygon = Type.Object(
  { type: Type.Literal('MultiPolygon'), coordinates: Type.Array(Type.Array(Ring, { minItems: 1, maxItems: 100 }), { minItems: 1, maxItems: 100 }) },
  { additionalProperties: false },
);
export const GeoArea = Type.Union([GeoPolygon, GeoMultiPolygon], { description: 'GeoJSON Polygon or MultiPolygon; rings closed, at least 4 positions' });
export type GeoArea = Static<typeof GeoArea>;
export type LonLat = { lon: number; lat: number };

function validPosition(p: unknown): p is [number, number] {
  return (
    Array.isArray(p) &&
    p.length === 2 &&
    typeof p[0] === 'number' &&
    typeof p[1] === 'number' &&
    Number.isFinite(p[0]) &&
    Number.isFinite(p[1]) &&
    p[0] >= -180 &&
    p[0] <= 180 &&
    p[1] >= -90 &&
    p[1] <= 90
  );
}

export function parsePoint(value: unknown, field = 'location'): LonLat {
  const v = value as GeoPoint;
  if (!v || v.type !== 'Point' || !validPosition(v.coordinates)) {
    throw AppError.badRequest(`${field} must be a GeoJSON Point with [lon, lat] in range`, [{ field, message: 'invalid GeoJSON Point' }]);
  }
  return { lon: v.coordinates[0], lat: v.coordinates[1] };
}

/** Validates a Polygon or MultiPolygon and returns its polygons as lists of rings (outer ring first). */
export function parseArea(value: unknown, field = 'geometry'): [number, number][][][] {
  const v = value as GeoArea;
  const errors: FieldError[] = [];
  const polygons: [number, number][][][] = v?.type === 'Polygon' ? [v.coordinates as any] : v?.type === 'MultiPolygon' ? (v.coordinates as any) : [];
  if (polygons.length === 0) errors.push({ field, message: 'must be a GeoJSON Polygon or MultiPolygon' });
  polygons.forEach((rings, pi) => {
    if (!Array.isArray(rings) || rings.length === 0) errors.push({ field: `${field}.coordinates[${pi}]`, message: 'polygon needs rings' });
    (rings ?? []).forEach((ring, ri) => {
      const where = `${field}.coordinates${v.type === 'MultiPolygon' ? `[${pi}]` : ''}[${ri}]`;
      if (!Array.isArray(ring) || ring.length < 4) return errors.push({ field: where, message: 'a ring needs at least 4 positions' });
      if (!ring.every(validPosition)) return errors.push({ field: where, message: 'positions must be [lon, lat] in range' });
      const [a, b] = [ring[0], ring[ring.length - 1]];
      if (a[0] !== b[0] || a[1] !== b[1]) errors.push({ field: where, message: 'ring must be closed (first position equals last)' });
      if (new Set(ring.map((p) => `${p[0]},${p[1]}`)).size < 3) errors.push({ field: where, message: 'ring must have 3 distinct positions' });
    });
  });
  if (errors.length) throw AppError.badRequest('Invalid geometry', errors);
  return polygons;
}

/** SQL text literal of a native point: `(lon,lat)`. */
export const pointSql = (p: LonLat): string => `(${p.lon},${p.lat})`;

/** SQL text literal of a native polygon from a ring (holes are not representable natively; keep the GeoJSON too). */
export const polygonSql = (ring: [number, number][]): string => `(${ring.map(([x, y]) => `(${x},${y})`).join(',')})`;

/** Parses the `(x,y)` text a native point comes back as. */
export function pointFromSql(text: string | null | undefined): LonLat | null {
  if (!text) return null;
  const m = /^\(([-0-9.e+]+),([-0-9.e+]+)\)$/i.exec(text.trim());
  return m ? { lon: Number(m[1]), lat: Number(m[2]) } : null;
}

export const toGeoPoint = (p: LonLat | null): GeoPoint | null => (p ? { type: 'Point', coordinates: [p.lon, p.lat] } : null);

const EARTH_RADIUS_M = 6_371_008.8;
const rad = (d: number) => (d * Math.PI) / 180;

/** Great-circle distance in metres. */
export function haversineMeters(a: LonLat, b: LonLat): number {
  const dLat = rad(b.lat - a.lat);
  const dLon = rad(b.lon - a.lon);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** The same haversine in SQL over native points (x = lon, y = lat), in metres. */
export const HAVERSINE_SQL = (a: string, b: string) =>
  `(2 * ${EARTH_RADIUS_M} * asin(least(1, sqrt(power(sin(radians((${b})[1] - (${a})[1]) / 2), 2) + cos(radians((${a})[1])) * cos(radians((${b})[1])) * power(sin(radians((${b})[0] - (${a})[0]) / 2), 2)))))`;

/** Point-in-polygon (ray casting) over a GeoJSON ring set, holes respected. */
export function polygonContains(rings: [number, number][][], p: LonLat): boolean {
  const inRing = (ring: [number, number][]) => {
    let inside = false;
    for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
      const [xi, yi] = ring[i];
      const [xj, yj] = ring[j];
      if (yi > p.lat !== yj > p.lat && p.lon < ((xj - xi) * (p.lat - yi)) / (yj - yi) + xi) inside = !inside;
    }
    return inside;
  };
  return inRing(rings[0]) && !rings.slice(1).some(inRing);
}
