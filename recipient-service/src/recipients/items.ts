import { describeProblem, LIMITS, type ValidationProblem, validator } from '@outreach/contracts';
import { countCodePoints, type FieldProblem, type InjectionMode, prepareInstructions } from './instructions';
import type { SafetyRule } from './safety';

/** A create item after validation, with defaults applied and instructions substituted. */
export interface NewRecipient {
  externalId: string | null;
  label: string | null;
  metadata: Record<string, string>;
  isActive: boolean;
  injectionMode: InjectionMode;
  injectionInstructions: string | null;
  maxTotalInteractions: number | null;
  maxInteractionsPerWindow: number | null;
  windowSeconds: number | null;
  disabledMessage: string | null;
  cooldownMessage: string | null;
}

/** The `error` result of one create item. */
export interface ItemError {
  status: 'error';
  index: number;
  externalId?: string;
  code: 'invalid_request';
  error: string;
  details: FieldProblem['details'];
}

export type ItemOutcome = { ok: true; value: NewRecipient } | { ok: false; error: ItemError };

/** Turns schema problems into one refusal naming the first field and listing them all. */
export function problemsToFieldProblem(problems: ValidationProblem[], whole = 'the item'): FieldProblem {
  // A bad metadata key yields a pattern error on the object and a propertyNames error
  // naming the key itself; the latter says more.
  const first = problems.find((p) => p.rule === 'propertyNames') ?? problems[0];
  return {
    message: describeProblem(first, whole),
    details: {
      pointer: first.pointer,
      rule: first.rule,
      problems: problems.map((p) => ({ pointer: p.pointer, rule: p.rule, message: p.message })),
    },
  };
}

/** A problem of one field found outside the schema. */
export function fieldProblem(pointer: string, rule: string, message: string): FieldProblem {
  return {
    message: `${pointer} ${message}`,
    details: { pointer, rule, problems: [{ pointer, rule, message }] },
  };
}

/**
 * The per-window cap and its window go together: both set or both null. Returns the
 * problem or null.
 */
export function checkWindowPair(perWindow: number | null, windowSeconds: number | null): FieldProblem | null {
  if ((perWindow === null) === (windowSeconds === null)) return null;
  const missing = perWindow === null ? '/maxInteractionsPerWindow' : '/windowSeconds';
  return fieldProblem(
    missing,
    'dependentRequired',
    'is needed too: maxInteractionsPerWindow and windowSeconds go together (both or neither)',
  );
}

const orNull = <T>(v: T | null | undefined): T | null => (v === undefined ? null : v);

/**
 * Validates one create item (a parsed JSON value) with the `create-item` schema and the
 * rules a schema cannot say: metadata numbers and booleans become strings (then at most
 * 500 characters), the window pair, defaults, placeholder substitution, the mode's
 * instruction limit and the safety rules.
 */
export function validateCreateItem(raw: unknown, index: number, rules: readonly SafetyRule[]): ItemOutcome {
  const externalId =
    raw !== null &&
    typeof raw === 'object' &&
    typeof (raw as { externalId?: unknown }).externalId === 'string'
      ? ((raw as { externalId: string }).externalId as string)
      : undefined;
  const fail = (problem: FieldProblem): ItemOutcome => ({
    ok: false,
    error: {
      status: 'error',
      index,
      ...(externalId !== undefined ? { externalId } : {}),
      code: 'invalid_request',
      error: problem.message,
      details: problem.details,
    },
  });

  const problems = validator('create-item')(raw);
  if (problems.length > 0) return fail(problemsToFieldProblem(problems));
  const item = raw as Record<string, unknown>;

  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries((item.metadata as Record<string, unknown> | undefined) ?? {})) {
    const text = String(value);
    if (countCodePoints(text) > LIMITS.metadataValueLength) {
      const pointer = `/metadata/${key}`;
      return fail(
        fieldProblem(pointer, 'maxLength', `must be at most ${LIMITS.metadataValueLength} characters`),
      );
    }
    metadata[key] = text;
  }

  const value: NewRecipient = {
    externalId: orNull(item.externalId as string | undefined),
    label: orNull(item.label as string | undefined),
    metadata,
    isActive: (item.isActive as boolean | undefined) ?? true,
    injectionMode: (item.injectionMode as InjectionMode | undefined) ?? 'append',
    injectionInstructions: null,
    maxTotalInteractions: orNull(item.maxTotalInteractions as number | null | undefined),
    maxInteractionsPerWindow: orNull(item.maxInteractionsPerWindow as number | null | undefined),
    windowSeconds: orNull(item.windowSeconds as number | null | undefined),
    disabledMessage: orNull(item.disabledMessage as string | null | undefined),
    cooldownMessage: orNull(item.cooldownMessage as string | null | undefined),
  };

  const pair = checkWindowPair(value.maxInteractionsPerWindow, value.windowSeconds);
  if (pair) return fail(pair);

  const template = item.injectionInstructions as string | null | undefined;
  if (typeof template === 'string') {
    const prepared = prepareInstructions(template, value.injectionMode, value, rules);
    if ('problem' in prepared) return fail(prepared.problem);
    value.injectionInstructions = prepared.text;
  }
  return { ok: true, value };
}

/** Parses one item's JSON text; malformed JSON is that item's error. */
export function parseCreateItem(json: string, index: number, rules: readonly SafetyRule[]): ItemOutcome {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    const problem = fieldProblem('/', 'json', 'is not valid JSON');
    return {
      ok: false,
      error: {
        status: 'error',
        index,
        code: 'invalid_request',
        error: problem.message,
        details: problem.details,
      },
    };
  }
  return validateCreateItem(raw, index, rules);
}
