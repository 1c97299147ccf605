import type Ajv2020 from 'ajv/dist/2020';

/**
 * The format of text a client sends to be stored or looked up: a string PostgreSQL cannot store
 * as sent (a NUL, a lone UTF-16 surrogate) is refused as the field's own problem, rather than
 * failing the whole request in the database or being stored changed.
 */
export const STORABLE_TEXT = 'storable-text';

/** The format of an operator's text the link page shows its visitors: storable, and no bidi controls. */
export const PAGE_TEXT = 'page-text';

/** What is wrong with a text refused by format `storable-text`. */
export const STORABLE_TEXT_MESSAGE = 'must not contain the NUL character (U+0000) or a lone UTF-16 surrogate';

/** What is wrong with a text refused by format `page-text`. */
export const PAGE_TEXT_MESSAGE =
  'must not contain the NUL character (U+0000), a lone UTF-16 surrogate, or a bidirectional embedding, override or isolate control (U+202A to U+202E, U+2066 to U+2069)';

// With the `u` flag a surrogate pair is one code point (not Cs): only a lone surrogate matches.
const LONE_SURROGATE = /\p{Cs}/u;

// The bidirectional embedding, override and isolate controls (LRE, RLE, PDF, LRO, RLO and LRI,
// RLI, FSI, PDI): they reorder what follows them, so "gnp.exe" after an RLO reads "exe.png" on the
// page. The marks (LRM, RLM, ALM) only steer the neutral characters beside them and stay allowed.
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/;
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g;

/**
 * True when PostgreSQL can store the text as it is: no NUL (U+0000), which text and jsonb cannot
 * hold, and no lone UTF-16 surrogate, which has no UTF-8 form (the driver would store U+FFFD in
 * its place, jsonb refuses its `\u` escape and fails the whole statement).
 */
export function isStorableText(text: string): boolean {
  return !text.includes('\0') && !LONE_SURROGATE.test(text);
}

/** True when an operator's text may be shown to the link's visitors as written (format `page-text`). */
export function isPageText(text: string): boolean {
  return isStorableText(text) && !BIDI_CONTROL.test(text);
}

/** An operator's text without bidirectional embedding, override and isolate controls, as the link page shows it. */
export function withoutBidiControls(text: string): string {
  return text.replace(BIDI_CONTROLS, '');
}

/** The JSON Schema of a text held to `storable-text`, within `bounds`. */
export const storableText = <B extends { minLength?: number; maxLength?: number }>(bounds: B) =>
  ({ type: 'string', format: STORABLE_TEXT, ...bounds }) as const;

/** The JSON Schema of an operator's text the link page shows (`page-text`), within `bounds`. */
export const pageText = <B extends { maxLength: number }>(bounds: B) =>
  ({ type: 'string', format: PAGE_TEXT, ...bounds }) as const;

/** Registers the text formats on an ajv instance: every validator of ours knows them alike. */
export function addTextFormats(ajv: Ajv2020): void {
  ajv.addFormat(STORABLE_TEXT, { type: 'string', validate: isStorableText });
  ajv.addFormat(PAGE_TEXT, { type: 'string', validate: isPageText });
}
