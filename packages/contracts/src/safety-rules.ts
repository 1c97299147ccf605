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
