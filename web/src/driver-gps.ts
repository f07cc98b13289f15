/**
 * Which GPS fixes the driver app keeps (a pure rule, tested in test/web/driver-gps.test.ts): one point every 5 s at
 * most while the driver moves (at least 15 m since the last kept point), once a minute while he stands still, three
 * times less often on a low battery. The rest are dropped: they would only spend battery, data and server work.
 */

export interface Fix {
  lat: number;
  lon: number;
  /** Milliseconds (Date.now()). */
  at: number;
}

export const GPS_RULE = { minMoveM: 15, movingEveryMs: 5000, stillEveryMs: 60_000, lowBatteryFactor: 3 } as const;

/** Great-circle distance in metres. */
export function haversine(a: { lat: number; lon: number }, b: { lat: number; lon: number }): number {
  const r = Math.PI / 180;
  const s = Math.sin(((b.lat - a.lat) * r) / 2) ** 2 + Math.cos(a.lat * r) * Math.cos(b.lat * r) * Math.sin(((b.lon - a.lon) * r) / 2) ** 2;
  return 2 * 6_371_000 * Math.asin(Math.sqrt(s));
}

/** Whether `here` is kept after the last kept fix (`last`, null for the first). */
export function keepFix(last: Fix | null, here: Fix, lowBattery: boolean): boolean {
  if (!last) return true;
  const slow = lowBattery ? GPS_RULE.lowBatteryFactor : 1;
  const elapsed = here.at - last.at;
  if (elapsed >= GPS_RULE.stillEveryMs * slow) return true;
  return elapsed >= GPS_RULE.movingEveryMs * slow && haversine(last, here) >= GPS_RULE.minMoveM;
}
