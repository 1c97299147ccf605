import { readFileSync } from 'node:fs';
import { DEFAULT_SAFETY_RULES, foldForSafety, type SafetyRuleSpec } from '@outreach/contracts';

/** A rule compiled once at start. */
export interface SafetyRule extends SafetyRuleSpec {
  regex: RegExp;
}

/** Compiles rule specs; throws naming the first rule that is malformed. */
export function compileSafetyRules(specs: readonly SafetyRuleSpec[]): SafetyRule[] {
  const ids = new Set<string>();
  return specs.map((spec, i) => {
    if (
      typeof spec !== 'object' ||
      spec === null ||
      typeof spec.id !== 'string' ||
      spec.id === '' ||
      typeof spec.pattern !== 'string' ||
      (spec.flags !== undefined && typeof spec.flags !== 'string') ||
      (spec.fold !== undefined && typeof spec.fold !== 'boolean')
    ) {
      throw new Error(
        `safety rule ${i} needs a string id and pattern (and optional string flags, boolean fold)`,
      );
    }
    if (ids.has(spec.id)) throw new Error(`safety rule id "${spec.id}" is used twice`);
    ids.add(spec.id);
    // The global and sticky flags make `test` stateful, which a shared rule must never be.
    const flags = (spec.flags ?? 'iu').replace(/[gy]/g, '');
    try {
      return { ...spec, description: spec.description ?? spec.id, regex: new RegExp(spec.pattern, flags) };
    } catch (err) {
      throw new Error(`safety rule "${spec.id}" has an invalid pattern: ${(err as Error).message}`);
    }
  });
}

/**
 * The rules in force: the built-in ones plus those of the JSON file at `file` (an array
 * of `{id, description, pattern, flags?, fold?}`), when given.
 */
export function loadSafetyRules(file?: string): SafetyRule[] {
  if (!file) return compileSafetyRules(DEFAULT_SAFETY_RULES);
  let extra: unknown;
  try {
    extra = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`SAFETY_RULES_FILE ${file} is not readable JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(extra)) throw new Error(`SAFETY_RULES_FILE ${file} must hold a JSON array of rules`);
  return compileSafetyRules([...DEFAULT_SAFETY_RULES, ...(extra as SafetyRuleSpec[])]);
}

/**
 * The first rule the text breaks, or null when it passes. Each rule is matched against the text
 * as sent and, unless its `fold` is false, against its folded copy (`foldForSafety`: NFKC and
 * Latin look-alikes), so "Ｉｇｎｏｒｅ" and "Ignоre" with a Cyrillic о are caught too.
 */
export function findSafetyViolation(text: string, rules: readonly SafetyRule[]): SafetyRule | null {
  const folded = foldForSafety(text);
  const other = folded === text ? null : folded;
  for (const rule of rules) {
    if (rule.regex.test(text)) return rule;
    if (other !== null && rule.fold !== false && rule.regex.test(other)) return rule;
  }
  return null;
}
