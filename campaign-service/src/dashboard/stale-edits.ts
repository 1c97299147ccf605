import { createHash } from 'node:crypto';
import type { Form } from './forms';
import { html, type SafeHtml } from './html';

/**
 * Edit forms that show a stored thing whole (a campaign, a device) save only what the operator
 * changed, so that a save from a form opened before someone else's never undoes theirs. The form
 * carries, for each group of fields saved together (a facet), a fingerprint of what it showed
 * (hidden `base.<facet>` fields; fingerprints, not copies, since a device's knowledge alone may
 * take 512 KiB). On save, a facet whose submitted value differs from its fingerprint is one the
 * operator changed: only those are saved. One also changed elsewhere since (the stored value no
 * longer matches the fingerprint either) is not saved over: the form comes back saying what it
 * holds now, with what the operator typed kept.
 */
export const BASE_PREFIX = 'base.';

/** A short fingerprint of a facet's value (its canonical JSON). */
export function fingerprint(value: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(value ?? null))
    .digest('base64url')
    .slice(0, 22);
}

/** The fingerprints of a form's facets, by facet. */
export function fingerprints<F extends string>(facets: Record<F, unknown>): Record<F, string> {
  return Object.fromEntries(
    Object.entries(facets).map(([name, value]) => [name, fingerprint(value)]),
  ) as Record<F, string>;
}

/** The hidden fields that carry a form's fingerprints. */
export function baseFields(base: Record<string, string>): SafeHtml {
  return html`${Object.entries(base).map(
    ([name, value]) => html`<input type="hidden" name="${BASE_PREFIX}${name}" value="${value}">`,
  )}`;
}

/** The fingerprints a submitted form carries, or where it carries none, those of `current`. */
export function baseFrom<F extends string>(form: Form, current: Record<F, unknown>): Record<F, string> {
  const now = fingerprints(current);
  for (const facet of Object.keys(now) as F[]) now[facet] = form.get(`${BASE_PREFIX}${facet}`) || now[facet];
  return now;
}

/**
 * Which facets the operator changed (`changed`), and which of those were changed elsewhere too
 * since the form was opened (`conflicts`). A form without the fingerprints (opened before they
 * existed) counts as showing what is stored now.
 */
export function compareWithBase<F extends string>(
  form: Form,
  submitted: Record<F, unknown>,
  current: Record<F, unknown>,
): { changed: F[]; conflicts: F[] } {
  const changed: F[] = [];
  const conflicts: F[] = [];
  const base = baseFrom(form, current);
  for (const facet of Object.keys(current) as F[]) {
    const now = fingerprint(current[facet]);
    const shown = base[facet];
    if (fingerprint(submitted[facet]) === shown) continue;
    changed.push(facet);
    if (now !== shown) conflicts.push(facet);
  }
  return { changed, conflicts };
}

/** Text as a browser's form sends it back: line breaks as CRLF, compared as LF and trimmed. */
export const sameText = (v: string | undefined | null) => (v ?? '').replace(/\r\n?/g, '\n').trim();

/** A stored text quoted in a message, shortened when long. */
export function quoted(v: string | undefined | null, max = 120): string {
  const t = sameText(v);
  if (t === '') return 'nothing (empty)';
  return `“${t.length > max ? `${t.slice(0, max)}…` : t}”`;
}
