// UTC days, as the accounts count them: 'YYYY-MM-DD'. Daily limits reset and usage records roll over
// at midnight UTC, whatever the server's time zone.

const DAY_MS = 86_400_000;

export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

let cachedDay = '';
let cachedUntil = 0;

/** Today's UTC day; the string is made once a day, not per lookup. */
export function today(now: number = Date.now()): string {
  if (now >= cachedUntil || now < cachedUntil - DAY_MS) {
    cachedDay = dayOf(now);
    cachedUntil = (Math.floor(now / DAY_MS) + 1) * DAY_MS;
  }
  return cachedDay;
}

/** Whole seconds from `now` to the next midnight UTC, at least 1. */
export function secondsToMidnight(now: number = Date.now()): number {
  return Math.max(1, Math.ceil(((Math.floor(now / DAY_MS) + 1) * DAY_MS - now) / 1000));
}
