import { isDeepStrictEqual } from 'node:util';

/** One field of an edit: its words, its value before and after, and whether to show the old one. */
export interface EditedField {
  words: string;
  before: unknown;
  after: unknown;
  /** The old value goes into the activity, as a name does (`name was “Spring”`); others are only named. */
  showBefore?: boolean;
  /** How two values compare; default: deep equality, whatever the order of an object's keys. */
  same?: (a: unknown, b: unknown) => boolean;
}

/** Instants compared as instants, however each is written (`…T00:00:00Z` and `…T00:00:00.000Z`). */
export const sameInstant = (a: unknown, b: unknown): boolean =>
  Date.parse(String(a)) === Date.parse(String(b));

/**
 * The activity's detail of an edit: the fields it changed, in the order given, separated by
 * semicolons (`name was “Spring”; end date`); null when it changed none, so that nothing is recorded.
 */
export function editDetail(fields: EditedField[]): string | null {
  const changed = fields
    .filter((f) => !(f.same ?? isDeepStrictEqual)(f.before, f.after))
    .map((f) => (f.showBefore ? `${f.words} was “${String(f.before)}”` : f.words));
  return changed.length > 0 ? changed.join('; ') : null;
}
