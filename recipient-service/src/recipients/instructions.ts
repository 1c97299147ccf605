import { LIMITS } from '@outreach/contracts';
import { type PlaceholderValues, substitutedLength, substitutePlaceholders } from './placeholders';
import { findSafetyViolation, type SafetyRule } from './safety';

export type InjectionMode = 'append' | 'replace';

/** Why stored instructions are refused: which limit, its value and what was sent. */
export interface InstructionsLimitProblem {
  rule: 'maxWords' | 'maxLength';
  limit: number;
  actual: number;
  message: string;
}

/** Words are runs of non-whitespace. */
export function countWords(text: string): number {
  return text.split(/\s+/u).filter((w) => w.length > 0).length;
}

/** Characters are Unicode code points, not UTF-16 units. */
export function countCodePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * Checks the (already substituted) instructions against the limit of `mode`: append
 * allows 500 words (and 20,000 characters), replace 7500 characters. Returns null when within the limit.
 */
export function checkInstructionsLength(text: string, mode: InjectionMode): InstructionsLimitProblem | null {
  if (mode === 'append') {
    const chars = countCodePoints(text);
    if (chars > LIMITS.instructionsChars) return tooLongText(LIMITS.instructionsChars, chars);
    const actual = countWords(text);
    return actual > LIMITS.appendWords
      ? {
          rule: 'maxWords',
          limit: LIMITS.appendWords,
          actual,
          message: `must have at most ${LIMITS.appendWords} words in append mode (has ${actual})`,
        }
      : null;
  }
  const actual = countCodePoints(text);
  return actual > LIMITS.replaceChars
    ? {
        rule: 'maxLength',
        limit: LIMITS.replaceChars,
        actual,
        message: `must have at most ${LIMITS.replaceChars} characters in replace mode (has ${actual})`,
      }
    : null;
}

/** A refusal of one field, shaped like every validation refusal of this service. */
export interface FieldProblem {
  message: string;
  details: {
    pointer: string;
    rule: string;
    problems: { pointer: string; rule: string; message: string }[];
    [extra: string]: unknown;
  };
}

const FIELD = '/injectionInstructions';

/** Instructions longer than any mode allows, in characters (code points) with placeholders filled in. */
function tooLongText(limit: number, actual: number): InstructionsLimitProblem {
  return {
    rule: 'maxLength',
    limit,
    actual,
    message: `must have at most ${limit} characters, placeholders filled in (has ${actual})`,
  };
}

/** A length limit broken, as the refusal of the field. */
function lengthProblem(tooLong: InstructionsLimitProblem): FieldProblem {
  return {
    message: `injectionInstructions ${tooLong.message}`,
    details: {
      pointer: FIELD,
      rule: tooLong.rule,
      limit: tooLong.limit,
      actual: tooLong.actual,
      problems: [{ pointer: FIELD, rule: tooLong.rule, message: tooLong.message }],
    },
  };
}

/**
 * Substitutes the placeholders of `template` and checks the text that would be stored:
 * the mode's length limit first, then the safety rules. Returns the stored text or the
 * refusal.
 */
export function prepareInstructions(
  template: string,
  mode: InjectionMode,
  values: PlaceholderValues,
  rules: readonly SafetyRule[],
): { text: string } | { problem: FieldProblem } {
  // Twice the limit in UTF-16 units is over it in code points whatever the text: refused unmade.
  const length = substitutedLength(template, values);
  if (length > 2 * LIMITS.instructionsChars) {
    return { problem: lengthProblem(tooLongText(LIMITS.instructionsChars, length)) };
  }
  const text = substitutePlaceholders(template, values);
  const problem = checkStoredInstructions(text, mode, rules);
  return problem ? { problem } : { text };
}

/** Checks already-substituted instructions against the mode's limit and the safety rules. */
export function checkStoredInstructions(
  text: string,
  mode: InjectionMode,
  rules: readonly SafetyRule[],
): FieldProblem | null {
  const tooLong = checkInstructionsLength(text, mode);
  if (tooLong) return lengthProblem(tooLong);
  const unsafe = findSafetyViolation(text, rules);
  if (unsafe) {
    const message = `was refused by the safety check: ${unsafe.description}`;
    return {
      message: `injectionInstructions ${message}`,
      details: {
        pointer: FIELD,
        reason: 'safety_refused',
        rule: unsafe.id,
        problems: [{ pointer: FIELD, rule: unsafe.id, message }],
      },
    };
  }
  return null;
}
