/**
 * Time zones for the dashboard: operators type wall-clock times in their zone; campaigns store
 * UTC instants. Conversion uses the runtime's IANA data (Intl), so daylight-saving changes are
 * handled the same way the browser does.
 */

const zones: string[] = (() => {
  const list = (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.(
    'timeZone',
  );
  const all = new Set(list ?? []);
  all.add('UTC');
  return [...all].sort();
})();

/** Every time zone the select offers. */
export function timeZones(): readonly string[] {
  return zones;
}

/** True for an IANA zone this runtime knows. */
export function isTimeZone(tz: string): boolean {
  if (!tz || tz.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** `make` for a zone, made once per zone (a few hundred at most): making a formatter costs far more than using it. */
function perZone(make: (timeZone: string) => Intl.DateTimeFormat): (timeZone: string) => Intl.DateTimeFormat {
  const made = new Map<string, Intl.DateTimeFormat>();
  return (timeZone) => {
    let format = made.get(timeZone);
    if (!format) {
      format = make(timeZone);
      made.set(timeZone, format);
    }
    return format;
  };
}

const wallClockFormat = perZone(
  (timeZone) =>
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    }),
);

const readableFormat = perZone(
  (timeZone) => new Intl.DateTimeFormat('en-GB', { timeZone, dateStyle: 'medium', timeStyle: 'short' }),
);

function wallClockParts(at: Date, timeZone: string): Record<string, number> {
  const parts = wallClockFormat(timeZone).formatToParts(at);
  const out: Record<string, number> = {};
  for (const p of parts) if (p.type !== 'literal') out[p.type] = Number(p.value);
  return out;
}

/** Offset of `timeZone` from UTC at instant `at`, in milliseconds. */
function offsetAt(at: Date, timeZone: string): number {
  const p = wallClockParts(at, timeZone);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return asUtc - Math.floor(at.getTime() / 1000) * 1000;
}

const LOCAL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/;

const DAY_MS = 86_400_000;

/**
 * The UTC instant of a `datetime-local` value in `timeZone`, or null when malformed. A time
 * that does not exist (skipped by a DST change) moves forward by the gap, as browsers do; a
 * time that occurs twice (when clocks go back) is its first occurrence.
 */
export function localToInstant(local: string, timeZone: string): Date | null {
  const m = LOCAL.exec(local.trim());
  if (!m || !isTimeZone(timeZone)) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map((v) => Number(v ?? 0));
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return null;
  const wall = Date.UTC(y, mo - 1, d, h, mi, s);
  const check = new Date(wall);
  if (check.getUTCDate() !== d) return null; // 31 February and the like
  // The offsets in force a day either side: an instant is the wall time less one of them, if
  // the zone has that offset then. Neither fits in a gap: the offset from before it moves the
  // time forward by the gap, whichever way the zone lies from UTC.
  const before = offsetAt(new Date(wall - DAY_MS), timeZone);
  const after = offsetAt(new Date(wall + DAY_MS), timeZone);
  const fits = [wall - before, wall - after].filter((t) => offsetAt(new Date(t), timeZone) === wall - t);
  return new Date(fits.length > 0 ? Math.min(...fits) : wall - before);
}

const pad = (n: number) => String(n).padStart(2, '0');

/** The `datetime-local` value (minutes) of an instant in `timeZone`. */
export function instantToLocal(at: Date | string, timeZone: string): string {
  const p = wallClockParts(new Date(at), timeZone);
  return `${p.year}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}`;
}

// How far apart two instants with the same wall-clock time can lie when clocks go back (a DST
// change of an hour, or of half an hour as on Lord Howe Island).
const REPEATS_MS = [1_800_000, 3_600_000];

/** `+01:00` or `-05:00`: the offset of `timeZone` from UTC at `at`. */
function offsetText(at: Date, timeZone: string): string {
  const minutes = Math.round(offsetAt(at, timeZone) / 60_000);
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/**
 * A readable instant in `timeZone`, e.g. `22 Nov 2026, 10:00 (Europe/Paris)`; in an hour that
 * occurs twice (clocks going back), with its UTC offset, which tells the two apart:
 * `7 Nov 2027, 01:30 (America/New_York, UTC-05:00)`.
 */
export function formatInstant(at: Date | string | null, timeZone: string): string {
  if (at === null) return '—';
  const when = new Date(at);
  const text = readableFormat(timeZone).format(when);
  const wall = instantToLocal(when, timeZone);
  const repeated = REPEATS_MS.some((ms) =>
    [when.getTime() - ms, when.getTime() + ms].some((t) => instantToLocal(new Date(t), timeZone) === wall),
  );
  return repeated ? `${text} (${timeZone}, UTC${offsetText(when, timeZone)})` : `${text} (${timeZone})`;
}

/** A whole-second duration as `2d 3h`, `4h 5m`, `6m 7s` or `8s`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s % 60}s`;
  return `${s}s`;
}
