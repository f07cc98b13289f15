import { wallClock } from '../../../platform/wall-clock.js';

/**
 * Branch opening hours in the organization's time zone. An interval is a weekday (0 = Sunday) and two
 * wall-clock times: `close` after `open` closes the same day; `close` before `open` runs past midnight
 * into the next day (20:00–02:00 belongs to the day it opens); `close` equal to `open` is 24 hours.
 * No intervals at all means the branch declares no hours: always open.
 */
export interface OpeningInterval {
  day: number;
  open: string;
  close: string;
}

const MINUTES_PER_DAY = 24 * 60;

const MINUTES_PER_WEEK = 7 * MINUTES_PER_DAY;

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** The local weekday and minute of the week of an instant in a time zone. */
function localWeekMinute(at: Date, timeZone: string): number {
  const w = wallClock(at, timeZone);
  return w.weekday * MINUTES_PER_DAY + w.h * 60 + w.min;
}

/** Each interval as [start, end) in minutes of the week; an overnight one ends past the week and wraps. */
function spans(hours: OpeningInterval[]): [number, number][] {
  return hours.map((h) => {
    const start = h.day * MINUTES_PER_DAY + minutesOf(h.open);
    let length = minutesOf(h.close) - minutesOf(h.open);
    if (length <= 0) length += MINUTES_PER_DAY;
    return [start, start + length];
  });
}

const inside = (m: number, [s, e]: [number, number]) => (m >= s && m < e) || (m + MINUTES_PER_WEEK >= s && m + MINUTES_PER_WEEK < e);

export interface OpeningState {
  open: boolean;
  /** When closed: the next opening instant (to the minute), or null when no interval is declared open. */
  next_open_at: Date | null;
}

export function openingState(hours: OpeningInterval[], timeZone: string, at = new Date()): OpeningState {
  if (hours.length === 0) return { open: true, next_open_at: null };
  const now = localWeekMinute(at, timeZone);
  const list = spans(hours);
  if (list.some((s) => inside(now, s))) return { open: true, next_open_at: null };
  // Minutes until the nearest start, wrapping around the week.
  const wait = Math.min(...list.map(([s]) => (((s - now) % MINUTES_PER_WEEK) + MINUTES_PER_WEEK) % MINUTES_PER_WEEK));
  const next = new Date(Math.floor(at.getTime() / 60_000) * 60_000 + wait * 60_000);
  // A daylight-saving change in between moves the wall clock; settle on the instant whose local time is the opening.
  const drift = localWeekMinute(next, timeZone) - ((now + wait) % MINUTES_PER_WEEK);
  return { open: false, next_open_at: drift === 0 ? next : new Date(next.getTime() - drift * 60_000) };
}
