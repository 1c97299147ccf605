import type { RecipientJson } from '@outreach/contracts';
import { AppError } from '@outreach/platform';
import type { FieldErrors, Form } from './forms';
import { CREATE_FIELDS, recipientFieldErrors } from './recipient-errors';

/** Create-item fields a PATCH may not change (set at creation only) or the edit form leaves to its own control. */
const NOT_EDITED = ['externalId', 'metadata', 'isActive'] as const;
type EditField = Exclude<(typeof CREATE_FIELDS)[number], (typeof NOT_EDITED)[number]>;

/** What the recipient edit form changes: the fields a v1 PATCH accepts, bar `isActive`, in the create form's order. */
export const EDIT_FIELDS: readonly EditField[] = CREATE_FIELDS.filter(
  (f): f is EditField => !(NOT_EDITED as readonly string[]).includes(f),
);

/** The edit form's controls as text, keyed by field. */
export type RecipientFormValues = Record<EditField, string>;

const TEXT_FIELDS = ['label', 'injectionInstructions', 'disabledMessage', 'cooldownMessage'] as const;
const LIMIT_FIELDS = ['maxTotalInteractions', 'maxInteractionsPerWindow', 'windowSeconds'] as const;

const text = (v: string | null | undefined) => v ?? '';
const count = (v: number | null | undefined) => (v === null || v === undefined ? '' : String(v));

/** The form's values for a stored recipient. */
export function formValuesOf(x: RecipientJson): RecipientFormValues {
  return {
    label: text(x.label),
    injectionMode: x.injectionMode === 'replace' ? 'replace' : 'append',
    injectionInstructions: text(x.injectionInstructions),
    maxTotalInteractions: count(x.maxTotalInteractions),
    maxInteractionsPerWindow: count(x.maxInteractionsPerWindow),
    windowSeconds: count(x.windowSeconds),
    disabledMessage: text(x.disabledMessage),
    cooldownMessage: text(x.cooldownMessage),
  };
}

/** The form's values as the operator submitted them, kept as typed for a page that refuses them. */
export function formValuesFrom(form: Form, prefix = ''): RecipientFormValues {
  return Object.fromEntries(EDIT_FIELDS.map((k) => [k, form.get(`${prefix}${k}`)])) as RecipientFormValues;
}

/** The prefix of the hidden fields that carry what the form showed when it was opened. */
export const SHOWN_PREFIX = 'shown.';

/**
 * What the form showed when it was opened (its hidden fields), or, from a form without them,
 * the recipient as stored now.
 */
export function shownValuesFrom(form: Form, current: RecipientJson): RecipientFormValues {
  return form.has(`${SHOWN_PREFIX}label`) ? formValuesFrom(form, SHOWN_PREFIX) : formValuesOf(current);
}

// A browser sends a textarea's line breaks as CRLF and drops a leading one; the new-recipient form
// trims. Text equal after this is unchanged, so a form saved as shown sends nothing for it.
const normalise = (v: string) => v.replace(/\r\n?/g, '\n').trim();

/**
 * The form's own refusal of a limit as typed (trimmed; empty is no limit), or undefined. A whole
 * number below 1 is said so here, as the campaign forms' numbers are, rather than as not a number.
 */
export function limitError(name: string, v: string): string | undefined {
  if (v === '') return undefined;
  if (!/^-?\d+$/.test(v)) return 'Enter a whole number, or leave it empty.';
  if (Number(v) < 1) {
    return name === 'windowSeconds'
      ? 'Enter 1 or more seconds, or leave it empty.'
      : 'Enter 1 or more, or leave it empty for no limit.';
  }
  return undefined;
}

/**
 * The PATCH body of the fields the operator changed from what the form `shown` them, or the
 * form's own errors. Compared with what was shown, not with the recipient as stored now: a field
 * someone else changed meanwhile (an API sync) and the operator left alone is not reverted.
 * Unchanged fields stay out: instructions sent again would be substituted and safety-checked
 * anew, and a PATCH is refused as a whole, so an untouched field must never block a change.
 */
export function recipientPatch(
  values: RecipientFormValues,
  shown: RecipientFormValues,
): { patch: Record<string, unknown>; errors: FieldErrors } {
  const patch: Record<string, unknown> = {};
  const errors: FieldErrors = {};
  for (const k of TEXT_FIELDS) {
    const v = normalise(values[k]);
    if (v !== normalise(shown[k])) patch[k] = v === '' ? null : v;
  }
  const mode = values.injectionMode === 'replace' ? 'replace' : 'append';
  if (mode !== (shown.injectionMode === 'replace' ? 'replace' : 'append')) patch.injectionMode = mode;
  for (const k of LIMIT_FIELDS) {
    const v = values[k].trim();
    if (v === shown[k].trim()) continue;
    const error = limitError(k, v);
    if (error) {
      errors[k] = error;
      continue;
    }
    patch[k] = v === '' ? null : Number(v);
  }
  return { patch, errors };
}

/**
 * The field errors of a PATCH the recipient service refused, each in words under its own field;
 * anything but a refused value (a conflict, an outage) is rethrown for the error page.
 */
export function patchFieldErrors(err: unknown): FieldErrors {
  if (!(err instanceof AppError) || err.code !== 'invalid_request') throw err;
  return recipientFieldErrors(err, EDIT_FIELDS);
}
