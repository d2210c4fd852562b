// UTC days as the README counts them: daily limits reset and usage records roll over at midnight
// UTC, and DAILY_LIMIT_REACHED's Retry-After is the seconds to the next midnight UTC. Every
// expectation below is worked out by hand from the calendar, not from the module's arithmetic.

import { dayOf, secondsToMidnight, today } from '../../src/accounts/clock';

describe('dayOf', () => {
  test('the UTC calendar day, whatever the hour', () => {
    expect(dayOf(Date.UTC(2026, 10, 23, 0, 0, 0, 0))).toBe('2026-11-23');
    expect(dayOf(Date.UTC(2026, 10, 23, 23, 59, 59, 999))).toBe('2026-11-23');
    expect(dayOf(Date.UTC(2024, 1, 29, 12))).toBe('2024-02-29');
  });
});

describe('today', () => {
  // today() keeps the day it made last; these steps run in order, each against what the one before left.
  test('changes at midnight UTC exactly, and not a millisecond before', () => {
    expect(today(Date.UTC(2026, 0, 1, 12))).toBe('2026-01-01');
    expect(today(Date.UTC(2026, 0, 1, 23, 59, 59, 999))).toBe('2026-01-01');
    expect(today(Date.UTC(2026, 0, 2, 0, 0, 0, 0))).toBe('2026-01-02');
    expect(today(Date.UTC(2026, 0, 2, 0, 0, 0, 1))).toBe('2026-01-02');
  });

  test('a clock set back a day (or a year) gives that earlier day, not the one it made last', () => {
    expect(today(Date.UTC(2026, 0, 5, 10))).toBe('2026-01-05');
    expect(today(Date.UTC(2026, 0, 4, 23, 59, 59, 999))).toBe('2026-01-04');
    expect(today(Date.UTC(2026, 0, 4, 0, 0, 0, 0))).toBe('2026-01-04');
    expect(today(Date.UTC(2026, 0, 3, 23, 0))).toBe('2026-01-03');
    expect(today(Date.UTC(2025, 5, 1, 8))).toBe('2025-06-01');
    expect(today(Date.UTC(2027, 5, 1, 8))).toBe('2027-06-01');
  });

  test('the day string is made once a day, not per call (its doc comment: not per lookup)', () => {
    const iso = jest.spyOn(Date.prototype, 'toISOString');
    try {
      expect(today(Date.UTC(2030, 2, 3, 9))).toBe('2030-03-03');
      expect(iso).toHaveBeenCalledTimes(1);
      expect(today(Date.UTC(2030, 2, 3, 9, 0, 1))).toBe('2030-03-03');
      expect(today(Date.UTC(2030, 2, 3, 0, 0, 0, 0))).toBe('2030-03-03');
      expect(today(Date.UTC(2030, 2, 3, 23, 59, 59, 999))).toBe('2030-03-03');
      expect(iso).toHaveBeenCalledTimes(1);
      expect(today(Date.UTC(2030, 2, 4, 0, 0, 0, 0))).toBe('2030-03-04');
      expect(iso).toHaveBeenCalledTimes(2);
    } finally {
      iso.mockRestore();
    }
  });

  test('without an argument it is the day of the current time', () => {
    const now = Date.UTC(2026, 10, 23, 15, 30);
    jest.spyOn(Date, 'now').mockReturnValue(now);
    try {
      expect(today()).toBe('2026-11-23');
    } finally {
      jest.restoreAllMocks();
    }
  });
});

describe('secondsToMidnight', () => {
  test('whole seconds to the next midnight UTC, rounded up', () => {
    expect(secondsToMidnight(Date.UTC(2026, 0, 1, 12, 0, 0, 0))).toBe(43_200);
    expect(secondsToMidnight(Date.UTC(2026, 0, 1, 0, 0, 0, 0))).toBe(86_400);
    expect(secondsToMidnight(Date.UTC(2026, 0, 1, 23, 0, 0, 0))).toBe(3600);
    expect(secondsToMidnight(Date.UTC(2026, 0, 1, 23, 59, 58, 500))).toBe(2);
    expect(secondsToMidnight(Date.UTC(2026, 0, 1, 23, 59, 59, 0))).toBe(1);
  });

  test('never 0: the last fraction of a second before midnight still says 1', () => {
    expect(secondsToMidnight(Date.UTC(2026, 0, 1, 23, 59, 59, 999))).toBe(1);
    expect(secondsToMidnight(Date.UTC(2026, 0, 1, 23, 59, 59, 1))).toBe(1);
  });

  test('without an argument it counts from the current time', () => {
    jest.spyOn(Date, 'now').mockReturnValue(Date.UTC(2026, 10, 23, 22, 0));
    try {
      expect(secondsToMidnight()).toBe(7200);
    } finally {
      jest.restoreAllMocks();
    }
  });
});
