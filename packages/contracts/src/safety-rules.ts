// The safety check's built-in rules are part of the API contract: a refusal names its rule in
// `details.rule`, and the OpenAPI document lists them.

/** One safety rule as data: refused when `pattern` (with `flags`) matches the instructions. */
export interface SafetyRuleSpec {
  id: string;
  description: string;
  pattern: string;
  flags?: string;
}

/**
 * Not right after a negation that opens its clause ("Never ignore …", "Don't forget …", "You must
 * not tell …"): those ask the opposite. Only at a clause's start, so "Why not ignore …" still counts.
 */
const NOT_NEGATED =
  "(?<!(?:^|[.!?;:,\\n])\\s*(?:(?:please|you|and|but)\\s+)?(?:do\\s+not|don['’]t|never|must\\s+not|must\\s+never|mustn['’]t|should\\s+not|should\\s+never|shouldn['’]t|cannot|can['’]t)\\s+)";

/**
 * The built-in rules. They catch instructions that try to subvert the assistant's base
 * prompt or smuggle prompt structure into the custom-instructions block.
 */
export const DEFAULT_SAFETY_RULES: readonly SafetyRuleSpec[] = [
  {
    id: 'ignore_previous_instructions',
    description:
      'asks the assistant to ignore, disregard or forget its previous, prior, above or system instructions, or everything above',
    pattern: `${NOT_NEGATED}\\b(?:ignore|disregard|forget)\\s+(?:(?:(?:all|any|the|your|of|these|those|my)\\s+)*(?:previous|prior|above|earlier|preceding|system)\\s+(?:instructions?|prompts?|rules?|directions?|messages?)\\b|(?:(?:all|any|of|the)\\s+)*(?:everything|anything)\\s+(?:above|so\\s+far)\\b)`,
    flags: 'iu',
  },
  {
    id: 'reveal_system_prompt',
    description: 'asks the assistant to reveal, print, show, tell or say what its system prompt is',
    // Showing, printing … the system, initial, hidden or original prompt or message; telling,
    // giving, sending, sharing or saying the system (or hidden) prompt itself, not "the initial
    // message" an operator may well want sent; and asking what the system prompt is.
    pattern: [
      '\\b(?:reveal|print|show|display|output|repeat|leak)\\s+(?:(?:me|us|the|your|its|full|entire|whole)\\s+)*(?:system|initial|hidden|original)\\s+(?:prompt|instructions?|message)\\b',
      `${NOT_NEGATED}\\b(?:tell|give|send|share|say)\\b[^.!?\\n]{0,40}?\\b(?:your|its|the)\\s+(?:system|hidden)\\s+prompt\\b`,
      "\\bwhat(?:\\s+is|\\s+are|['’]s)\\s+(?:your|its|the)\\s+(?:system|hidden)\\s+(?:prompt|instructions?)\\b",
    ].join('|'),
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
