/** The wall clock of an instant in an IANA time zone (organizations keep theirs: hours, days and weeks are local). */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      weekday: 'short',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

export interface WallClock {
  y: number;
  m: number;
  d: number;
  /** 0 Sunday … 6 Saturday. */
  weekday: number;
  h: number;
  min: number;
  s: number;
}

export function wallClock(at: Date, timeZone: string): WallClock {
  const p = Object.fromEntries(
    formatter(timeZone)
      .formatToParts(at)
      .map((x) => [x.type, x.value]),
  );
  return {
    y: Number(p.year),
    m: Number(p.month),
    d: Number(p.day),
    weekday: WEEKDAYS.indexOf(p.weekday!),
    h: Number(p.hour),
    min: Number(p.minute),
    s: Number(p.second),
  };
}
