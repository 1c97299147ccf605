import { AppError, readBodyText } from '@outreach/platform';
import type { Context } from 'koa';
import { MAX_MINOR_UNITS } from '../http/admin.schemas';

/** A submitted form: every field as the last value sent, plus all values per name. */
export interface Form {
  get(name: string): string;
  all(name: string): string[];
  has(name: string): boolean;
}

/** The most a form may take from a visitor not signed in: the sign-in form is all there is. */
export const FORM_BYTES = 256 * 1024;
/**
 * The most a signed-in operator's form may take: a device of the largest size allowed
 * (DEVICE_MAX_BYTES of JSON) grows up to threefold when the browser percent-encodes it.
 */
export const OPERATOR_FORM_BYTES = 2 * 1024 * 1024;

/** Reads an `application/x-www-form-urlencoded` body of at most `limit` bytes. */
export async function readForm(ctx: Context, limit = FORM_BYTES): Promise<Form> {
  if (!ctx.is('application/x-www-form-urlencoded')) {
    throw new AppError('unsupported_media_type', 'Send the form as application/x-www-form-urlencoded.');
  }
  const params = new URLSearchParams(await readBodyText(ctx, limit));
  return {
    get: (name) => params.getAll(name).at(-1) ?? '',
    all: (name) => params.getAll(name),
    has: (name) => params.has(name),
  };
}

/** Reads one cookie from the request. */
export function readCookie(ctx: Context, name: string): string | undefined {
  for (const part of (ctx.get('cookie') || '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return decodeURIComponent(part.slice(i + 1).trim());
  }
  return undefined;
}

/**
 * Sets a cookie by header: HttpOnly, SameSite=Lax, Path=/, Secure when asked. Written by
 * hand because Koa refuses Secure cookies on a plain-HTTP hop behind a TLS proxy.
 */
export function writeCookie(
  ctx: Context,
  name: string,
  value: string,
  options: { secure: boolean; maxAgeSeconds?: number },
): void {
  const parts = [`${name}=${encodeURIComponent(value)}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
  if (options.secure) parts.push('Secure');
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${options.maxAgeSeconds}`);
  ctx.append('Set-Cookie', parts.join('; '));
}

/** Problems found in a form: field name → message. */
export type FieldErrors = Record<string, string>;

/** An integer field; '' gives null when `optional`. */
export function intField(
  form: Form,
  name: string,
  errors: FieldErrors,
  opts: { optional?: boolean; min?: number; max?: number } = {},
): number | null {
  const text = form.get(name).trim();
  if (text === '') {
    if (!opts.optional) errors[name] = 'Enter a whole number.';
    return null;
  }
  if (!/^-?\d+$/.test(text)) {
    errors[name] = 'Enter a whole number.';
    return null;
  }
  const n = Number(text);
  if (opts.min !== undefined && n < opts.min) errors[name] = `Enter ${opts.min} or more.`;
  else if (opts.max !== undefined && n > opts.max) errors[name] = `Enter ${opts.max} or less.`;
  return n;
}

/** A money amount typed in major units (e.g. `12.50`) as integer minor units; '' gives null. */
export function moneyField(form: Form, name: string, errors: FieldErrors): number | null {
  const text = form.get(name).trim();
  if (text === '') return null;
  const m = /^(\d+)(?:[.,](\d{1,2}))?$/.exec(text);
  if (!m) {
    errors[name] = 'Enter an amount such as 12 or 0.25.';
    return null;
  }
  // The schema's limit, said in the form's units: past it the API's words would name the field's
  // pointer and minor units. Any number of digits reaches this check, so it alone sets the limit.
  const minor = Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
  if (minor > MAX_MINOR_UNITS) {
    errors[name] = `Enter at most ${formatMoney(MAX_MINOR_UNITS)}.`;
    return null;
  }
  return minor;
}

/** Integer minor units as a major-unit amount, e.g. 1250 → `12.50`. */
export function formatMoney(minor: number | null | undefined): string {
  if (minor === null || minor === undefined) return '—';
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  return `${sign}${Math.floor(abs / 100).toLocaleString('en-US')}.${String(abs % 100).padStart(2, '0')}`;
}

/** The value for a money input. */
export function moneyInput(minor: number | null | undefined): string {
  if (minor === null || minor === undefined) return '';
  return `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;
}
