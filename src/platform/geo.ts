import { Type, type Static } from '@sinclair/typebox';
import { AppError, type FieldError } from './errors.js';

/** GeoJSON in the API; native `point` (x = lon, y = lat) and `polygon` in SQL. */
/**
 * `[longitude, latitude]` or `[longitude, latitude, altitude]` (RFC 7946 §3.1.1: the altitude is accepted and
 * ignored: never stored nor returned). OpenAPI 3.1 / JSON Schema 2020-12 form (`prefixItems`), not the draft-07
 * tuple form (`items: [..]`) that 3.1 validators reject. The server's Ajv checks `prefixItems` with a keyword
 * of its own (src/app.ts); `parsePoint`/`parseArea` check the ranges again and drop the altitude.
 */
const LON = { type: 'number', minimum: -180, maximum: 180, description: 'longitude' };
const LAT = { type: 'number', minimum: -90, maximum: 90, description: 'latitude' };
export const Position = Type.Unsafe<[number, number] | [number, number, number]>({
  // Two closed tuples rather than one with an optional third member: generated clients type it as a union.
  anyOf: [
    { type: 'array', prefixItems: [LON, LAT], items: { type: 'number' }, minItems: 2, maxItems: 2 },
    {
      type: 'array',
      prefixItems: [LON, LAT, { type: 'number', description: 'altitude in metres (accepted and ignored)' }],
      items: { type: 'number' },
      minItems: 3,
      maxItems: 3,
    },
  ],
  description: '[longitude, latitude] or [longitude, latitude, altitude] (WGS 84; an altitude is accepted and ignored)',
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
  {
    type: Type.Literal('MultiPolygon'),
    coordinates: Type.Array(Type.Array(Ring, { minItems: 1, maxItems: 100 }), { minItems: 1, maxItems: 100 }),
  },
  { additionalProperties: false },
);
export const GeoArea = Type.Union([GeoPolygon, GeoMultiPolygon], {
  description: 'GeoJSON Polygon or MultiPolygon; rings closed, at least 4 positions',
});
export type GeoArea = Static<typeof GeoArea>;
export type LonLat = { lon: number; lat: number };

function validPosition(p: unknown): p is [number, number] | [number, number, number] {
  return (
    Array.isArray(p) &&
    (p.length === 2 || p.length === 3) &&
    p.every((n) => typeof n === 'number' && Number.isFinite(n)) &&
    p[0] >= -180 &&
    p[0] <= 180 &&
    p[1] >= -90 &&
    p[1] <= 90
  );
}

/** `[lon, lat]` of a valid position: an altitude is dropped. */
const flat = (p: number[]): [number, number] => [p[0], p[1]];

export function parsePoint(value: unknown, field = 'location'): LonLat {
  const v = value as GeoPoint;
  if (!v || v.type !== 'Point' || !validPosition(v.coordinates)) {
    throw AppError.badRequest(`${field} must be a GeoJSON Point with [lon, lat] (or [lon, lat, alt]) in range`, [
      { field, message: 'invalid GeoJSON Point' },
    ]);
  }
  return { lon: v.coordinates[0], lat: v.coordinates[1] };
}

type Pt = [number, number];
const cross = (o: Pt, a: Pt, b: Pt) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
const onSegment = (p: Pt, a: Pt, b: Pt) =>
  Math.min(a[0], b[0]) <= p[0] && p[0] <= Math.max(a[0], b[0]) && Math.min(a[1], b[1]) <= p[1] && p[1] <= Math.max(a[1], b[1]);

/** Do the closed segments ab and cd share at least one point? */
function segmentsTouch(a: Pt, b: Pt, c: Pt, d: Pt): boolean {
  const d1 = cross(c, d, a);
  const d2 = cross(c, d, b);
  const d3 = cross(a, b, c);
  const d4 = cross(a, b, d);
  if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))) return true;
  return (
    (d1 === 0 && onSegment(a, c, d)) ||
    (d2 === 0 && onSegment(b, c, d)) ||
    (d3 === 0 && onSegment(c, a, b)) ||
    (d4 === 0 && onSegment(d, a, b))
  );
}

/**
 * The first place where the rings of one polygon cross or touch themselves or each other (a bow-tie, a ring
 * folding back on itself, a hole crossing the outer ring), or null when the polygon is simple. Segments are swept
 * in order of their left end, so only segments whose x-ranges overlap are compared.
 */
export function selfIntersection(rings: Pt[][]): { ring: number; other: number } | null {
  type Seg = { a: Pt; b: Pt; ring: number; i: number; n: number; minX: number; maxX: number };
  const segs: Seg[] = [];
  rings.forEach((raw, ring) => {
    // Repeated consecutive positions are zero-length segments, not crossings.
    const pts = raw.filter((p, i) => i === 0 || p[0] !== raw[i - 1][0] || p[1] !== raw[i - 1][1]);
    const n = pts.length - 1;
    for (let i = 0; i < n; i++) {
      const [a, b] = [pts[i], pts[i + 1]];
      segs.push({ a, b, ring, i, n, minX: Math.min(a[0], b[0]), maxX: Math.max(a[0], b[0]) });
    }
  });
  segs.sort((x, y) => x.minX - y.minX);
  const active: Seg[] = [];
  for (const s of segs) {
    for (let k = active.length - 1; k >= 0; k--) if (active[k].maxX < s.minX) active.splice(k, 1);
    for (const o of active) {
      if (Math.max(Math.min(s.a[1], s.b[1]), Math.min(o.a[1], o.b[1])) > Math.min(Math.max(s.a[1], s.b[1]), Math.max(o.a[1], o.b[1])))
        continue;
      if (o.ring === s.ring) {
        const gap = Math.abs(o.i - s.i);
        if (gap === 1 || gap === s.n - 1) {
          // Neighbours share one end; they are wrong only when they fold back over each other (collinear, opposite).
          const [first, second] = (o.i + 1) % s.n === s.i ? [o, s] : [s, o];
          const u: Pt = [first.b[0] - first.a[0], first.b[1] - first.a[1]];
          const v: Pt = [second.b[0] - second.a[0], second.b[1] - second.a[1]];
          if (u[0] * v[1] - u[1] * v[0] === 0 && u[0] * v[0] + u[1] * v[1] < 0) return { ring: s.ring, other: o.ring };
          continue;
        }
      }
      if (segmentsTouch(s.a, s.b, o.a, o.b)) return { ring: s.ring, other: o.ring };
    }
    active.push(s);
  }
  return null;
}

/**
 * Validates a Polygon or MultiPolygon and returns its polygons as lists of rings (outer ring first), positions as
 * `[lon, lat]` (an altitude is dropped). Self-intersecting polygons (a bow-tie ring, rings crossing each other)
 * are refused.
 */
export function parseArea(value: unknown, field = 'geometry'): [number, number][][][] {
  const v = value as GeoArea;
  const errors: FieldError[] = [];
  const raw: unknown[][][] = v?.type === 'Polygon' ? [v.coordinates as any] : v?.type === 'MultiPolygon' ? (v.coordinates as any) : [];
  if (raw.length === 0) errors.push({ field, message: 'must be a GeoJSON Polygon or MultiPolygon' });
  const polygons: [number, number][][][] = [];
  raw.forEach((rings, pi) => {
    const where = (ri?: number) => `${field}.coordinates${v.type === 'MultiPolygon' ? `[${pi}]` : ''}${ri === undefined ? '' : `[${ri}]`}`;
    if (!Array.isArray(rings) || rings.length === 0)
      return errors.push({ field: `${field}.coordinates[${pi}]`, message: 'polygon needs rings' });
    const out: [number, number][][] = [];
    let ok = true;
    rings.forEach((ring, ri) => {
      ok = false;
      if (!Array.isArray(ring) || ring.length < 4) return errors.push({ field: where(ri), message: 'a ring needs at least 4 positions' });
      if (!ring.every(validPosition))
        return errors.push({ field: where(ri), message: 'positions must be [lon, lat] or [lon, lat, alt] in range' });
      const r = (ring as number[][]).map(flat);
      const [a, b] = [r[0], r[r.length - 1]];
      if (a[0] !== b[0] || a[1] !== b[1])
        return errors.push({ field: where(ri), message: 'ring must be closed (first position equals last)' });
      if (new Set(r.map((p) => `${p[0]},${p[1]}`)).size < 3)
        return errors.push({ field: where(ri), message: 'ring must have 3 distinct positions' });
      out.push(r);
      ok = true;
    });
    if (!ok || out.length !== rings.length) return;
    const hit = selfIntersection(out);
    if (hit) {
      const message =
        hit.ring === hit.other
          ? 'ring must not intersect itself (a bow-tie or a fold-back is not a valid polygon)'
          : `rings ${Math.min(hit.ring, hit.other)} and ${Math.max(hit.ring, hit.other)} must not cross or touch`;
      errors.push({ field: where(hit.ring === hit.other ? hit.ring : undefined), message });
    }
    polygons.push(out);
  });
  if (errors.length) throw AppError.badRequest('Invalid geometry', errors);
  return polygons;
}

/** The GeoJSON of parsed polygons: the stored form (altitudes dropped). */
export function areaGeoJson(type: 'Polygon' | 'MultiPolygon', polygons: [number, number][][][]): GeoArea {
  return type === 'Polygon' ? { type, coordinates: polygons[0] } : { type, coordinates: polygons };
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
