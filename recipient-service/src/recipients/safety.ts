import { readFileSync } from 'node:fs';

/** One safety rule as data: refused when `pattern` (with `flags`) matches the instructions. */
export interface SafetyRuleSpec {
  id: string;
  description: string;
  pattern: string;
  flags?: string;
}

/** A rule compiled once at start. */
export interface SafetyRule extends SafetyRuleSpec {
  regex: RegExp;
}

/**
 * The built-in rules. They catch instructions that try to subvert the assistant's base
 * prompt or smuggle prompt structure into the custom-instructions block.
 */
export const DEFAULT_SAFETY_RULES: readonly SafetyRuleSpec[] = [
  {
    id: 'ignore_previous_instructions',
    description:
      'asks the assistant to ignore, disregard or forget its previous, prior, above or system instructions, or everything above',
    // Not after "not", "never", "cannot" or "n't": "never ignore the previous instructions" asks
    // the opposite.
    pattern:
      "(?<!(?:\\bnot|\\bnever|\\bcannot|n['’]t)\\s+)\\b(?:ignore|disregard|forget)\\s+(?:(?:(?:all|any|the|your|of|these|those|my)\\s+)*(?:previous|prior|above|earlier|preceding|system)\\s+(?:instructions?|prompts?|rules?|directions?|messages?)\\b|(?:(?:all|any|of|the)\\s+)*(?:everything|anything)\\s+(?:above|so\\s+far)\\b)",
    flags: 'iu',
  },
  {
    id: 'reveal_system_prompt',
    description: 'asks the assistant to reveal, print, show, tell or say what its system prompt is',
    pattern:
      '\\b(?:reveal|print|show|display|output|repeat|leak|tell|give|send|share|what\\s+(?:is|are|was|were))\\s+(?:(?:me|us|the|your|its|full|entire|whole|exact)\\s+)*(?:system|initial|hidden|original)\\s+(?:prompt|instructions?|message)\\b',
    flags: 'iu',
  },
  {
    id: 'chat_template_marker',
    description: 'contains a chat-template role marker such as <|im_start|>, <|system|>, [INST] or <<SYS>>',
    pattern: '<\\|\\s*(?:im_start|im_end|system|user|assistant|endoftext)\\s*\\|>|\\[/?INST\\]|<</?SYS>>',
    flags: 'iu',
  },
  {
    id: 'role_line',
    description: 'has a line starting with a role name such as "system:" or "assistant:"',
    pattern: '^[ \\t]*(?:system|assistant)[ \\t]*:',
    flags: 'imu',
  },
  {
    id: 'invisible_characters',
    description:
      'contains invisible characters: format characters (Unicode category Cf: zero-width, bidirectional controls, tag characters, soft hyphens) or blank letters (Hangul fillers, the blank Braille pattern)',
    // The whole category, not a list of ranges: tag characters (U+E0000 block) spell out hidden
    // ASCII text, and a list would miss whatever Unicode adds next. Emoji built with them
    // (zero-width joiner sequences, subdivision flags) are refused too. The blank letters are
    // not Cf but render as nothing, so they hide text just as well.
    pattern: '[\\p{Cf}\\u115F\\u1160\\u3164\\uFFA0\\u2800]',
    flags: 'u',
  },
];

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
      (spec.flags !== undefined && typeof spec.flags !== 'string')
    ) {
      throw new Error(`safety rule ${i} needs a string id and pattern (and optional string flags)`);
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
 * of `{id, description, pattern, flags?}`), when given.
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

/** The first rule the text breaks, or null when it passes. */
export function findSafetyViolation(text: string, rules: readonly SafetyRule[]): SafetyRule | null {
  for (const rule of rules) if (rule.regex.test(text)) return rule;
  return null;
}
