import { formatDuration, formatInstant, instantToLocal, localToInstant } from './time';

describe('dashboard time zones', () => {
  it('converts a wall-clock time in a zone to the UTC instant and back', () => {
    expect(localToInstant('2026-07-01T09:30', 'Europe/Paris')?.toISOString()).toBe(
      '2026-07-01T07:30:00.000Z',
    );
    expect(localToInstant('2026-12-01T09:30', 'Europe/Paris')?.toISOString()).toBe(
      '2026-12-01T08:30:00.000Z',
    );
    expect(localToInstant('2026-12-01T09:30', 'America/New_York')?.toISOString()).toBe(
      '2026-12-01T14:30:00.000Z',
    );
    expect(localToInstant('2026-12-01T09:30', 'UTC')?.toISOString()).toBe('2026-12-01T09:30:00.000Z');
    expect(instantToLocal('2026-07-01T07:30:00.000Z', 'Europe/Paris')).toBe('2026-07-01T09:30');
  });

  it('moves a time skipped by daylight saving forward', () => {
    // 2026-03-29 02:30 does not exist in Paris (clocks jump 02:00 -> 03:00).
    const at = localToInstant('2026-03-29T02:30', 'Europe/Paris');
    expect(at?.toISOString()).toBe('2026-03-29T01:30:00.000Z');
  });

  it('moves a time a DST change skips forward by the gap, in zones east and west of UTC', () => {
    // New York 2026-03-08: 02:00 EST becomes 03:00 EDT; 02:30 is 03:30 EDT.
    expect(localToInstant('2026-03-08T02:30', 'America/New_York')?.toISOString()).toBe(
      '2026-03-08T07:30:00.000Z',
    );
    // Sydney 2026-10-04: 02:00 AEST becomes 03:00 AEDT.
    expect(localToInstant('2026-10-04T02:30', 'Australia/Sydney')?.toISOString()).toBe(
      '2026-10-03T16:30:00.000Z',
    );
    // Either side of the gap stays as it is.
    expect(localToInstant('2026-03-08T01:59', 'America/New_York')?.toISOString()).toBe(
      '2026-03-08T06:59:00.000Z',
    );
    expect(localToInstant('2026-03-08T03:00', 'America/New_York')?.toISOString()).toBe(
      '2026-03-08T07:00:00.000Z',
    );
  });

  it('takes the first of a time that occurs twice when clocks go back', () => {
    // New York 2026-11-01: 01:30 EDT (05:30Z), then 01:30 EST (06:30Z).
    expect(localToInstant('2026-11-01T01:30', 'America/New_York')?.toISOString()).toBe(
      '2026-11-01T05:30:00.000Z',
    );
    // Paris 2026-10-25: 02:30 CEST (00:30Z), then 02:30 CET (01:30Z).
    expect(localToInstant('2026-10-25T02:30', 'Europe/Paris')?.toISOString()).toBe(
      '2026-10-25T00:30:00.000Z',
    );
  });

  it('refuses malformed input and unknown zones', () => {
    expect(localToInstant('2026-02-31T10:00', 'UTC')).toBeNull();
    expect(localToInstant('yesterday', 'UTC')).toBeNull();
    expect(localToInstant('2026-01-01T10:00', 'Mars/Olympus')).toBeNull();
  });

  it('formats durations', () => {
    expect(formatDuration(5)).toBe('5s');
    expect(formatDuration(125)).toBe('2m 5s');
    expect(formatDuration(3 * 3600 + 120)).toBe('3h 2m');
    expect(formatDuration(2 * 86400 + 3600)).toBe('2d 1h');
  });

  it('tells the two times of a repeated hour apart by their offset, and leaves other times plain', () => {
    // New York 2027-11-07: 02:00 EDT becomes 01:00 EST, so 01:30 comes twice.
    expect(formatInstant('2027-11-07T05:30:00.000Z', 'America/New_York')).toBe(
      '7 Nov 2027, 01:30 (America/New_York, UTC-04:00)',
    );
    expect(formatInstant('2027-11-07T06:30:00.000Z', 'America/New_York')).toBe(
      '7 Nov 2027, 01:30 (America/New_York, UTC-05:00)',
    );
    expect(formatInstant('2027-11-07T08:30:00.000Z', 'America/New_York')).toBe(
      '7 Nov 2027, 03:30 (America/New_York)',
    );
    // The hour a DST change skips is not repeated, nor is any time in UTC.
    expect(formatInstant('2027-03-14T07:30:00.000Z', 'America/New_York')).toBe(
      '14 Mar 2027, 03:30 (America/New_York)',
    );
    expect(formatInstant('2027-11-07T06:30:00.000Z', 'UTC')).toBe('7 Nov 2027, 06:30 (UTC)');
  });
});
