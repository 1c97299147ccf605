// The safety check's built-in rules are part of the API contract: a refusal names its rule in
// `details.rule`, and the OpenAPI document lists them.

import { PROMPT_SECTION_HEADINGS } from './prompt';

/**
 * One safety rule as data: refused when `pattern` (with `flags`) matches the instructions, or
 * their folded copy (`foldForSafety`) unless `fold` is false.
 */
export interface SafetyRuleSpec {
  id: string;
  description: string;
  pattern: string;
  flags?: string;
  /** Whether the rule is also matched against the folded text; true unless set to false. */
  fold?: boolean;
}

/**
 * Latin look-alikes from Cyrillic, Greek, Armenian, Turkish and the IPA, each folded to the Latin
 * letter it passes for ("Ignоre" with a Cyrillic о, "ΑSSISTANT" with a Greek Α, "Ignօre" with an
 * Armenian օ, "ɪɢɴᴏʀᴇ" in small capitals). Only letters drawn (nearly) the same as a Latin one in
 * common fonts; Cyrillic т and м, Greek τ, γ and η, Armenian ա and Լ are not. NFKC leaves all of
 * them as they are. A real Russian, Greek or Armenian text folds to a mix that spells none of the
 * rules' English words.
 */
export const SAFETY_LOOKALIKES: Readonly<Record<string, string>> = {
  // Cyrillic.
  а: 'a',
  е: 'e',
  о: 'o',
  р: 'p',
  с: 'c',
  у: 'y',
  х: 'x',
  і: 'i',
  ј: 'j',
  ѕ: 's',
  һ: 'h',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  ү: 'y',
  ӏ: 'l',
  А: 'A',
  В: 'B',
  Е: 'E',
  К: 'K',
  М: 'M',
  Н: 'H',
  О: 'O',
  Р: 'P',
  С: 'C',
  Т: 'T',
  У: 'Y',
  Х: 'X',
  І: 'I',
  Ј: 'J',
  Ѕ: 'S',
  Һ: 'H',
  Ԛ: 'Q',
  Ԝ: 'W',
  Ү: 'Y',
  Ӏ: 'I',
  // Greek.
  α: 'a',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  υ: 'u',
  χ: 'x',
  ϲ: 'c',
  Α: 'A',
  Β: 'B',
  Ε: 'E',
  Ζ: 'Z',
  Η: 'H',
  Ι: 'I',
  Κ: 'K',
  Μ: 'M',
  Ν: 'N',
  Ο: 'O',
  Ρ: 'P',
  Τ: 'T',
  Υ: 'Y',
  Χ: 'X',
  Ϲ: 'C',
  // Armenian (Unicode's confusables).
  օ: 'o',
  ս: 'u',
  հ: 'h',
  ո: 'n',
  ռ: 'n',
  ց: 'g',
  ք: 'f',
  գ: 'q',
  զ: 'q',
  Օ: 'O',
  Ս: 'U',
  Տ: 'S',
  // Latin: the dotless i of Turkish and Azerbaijani.
  ı: 'i',
  // Latin small capitals (phonetic letters, and the "small caps" of text generators): NFKC keeps
  // them, and case-insensitive matching does not take ɪ for i.
  ᴀ: 'a',
  ʙ: 'b',
  ᴄ: 'c',
  ᴅ: 'd',
  ᴇ: 'e',
  ꜰ: 'f',
  ɢ: 'g',
  ʜ: 'h',
  ɪ: 'i',
  ᴊ: 'j',
  ᴋ: 'k',
  ʟ: 'l',
  ᴍ: 'm',
  ɴ: 'n',
  ᴏ: 'o',
  ᴘ: 'p',
  ꞯ: 'q',
  ʀ: 'r',
  ꜱ: 's',
  ᴛ: 't',
  ᴜ: 'u',
  ᴠ: 'v',
  ᴡ: 'w',
  ʏ: 'y',
  ᴢ: 'z',
  // Other IPA letters drawn as Latin ones: script a and g, iota, open e, dotless j.
  ɑ: 'a',
  ɡ: 'g',
  ɩ: 'i',
  ɛ: 'e',
  ȷ: 'j',
};

const LOOKALIKE = new RegExp(`[${Object.keys(SAFETY_LOOKALIKES).join('')}]`, 'gu');
const NOT_ASCII = /[\u0080-\u{10FFFF}]/u;

const COMBINING_MARK = /\p{M}/gu;

/**
 * The text as the rules also see it: decomposed (NFKD) and stripped of combining marks, so
 * "Ïgnore" and "prevïous" lose their diacritics; then NFKC (full-width and mathematical letters,
 * full-width colons and bars, ligatures become their plain forms); then SAFETY_LOOKALIKES. Only
 * this copy loses its marks: the text as sent, which is stored, keeps them, and real French,
 * German, Czech or Vietnamese folds to words that are not the rules' English ones, but for Czech
 * and Slovak "Systém:" at a line's start, which folds to a role line. Linear in the text's
 * length; ASCII text is returned as it is.
 */
export function foldForSafety(text: string): string {
  if (!NOT_ASCII.test(text)) return text;
  return text
    .normalize('NFKD')
    .replace(COMBINING_MARK, '')
    .normalize('NFKC')
    .replace(LOOKALIKE, (c) => SAFETY_LOOKALIKES[c]);
}

/**
 * Not right after a negation that opens its clause ("Never ignore …", "Don't forget …", "You must
 * not tell …"): those ask the opposite. Only at a clause's start, so "Why not ignore …" still counts.
 */
// Its spaces are bounded: a lookbehind with an open-ended run of spaces costs the length of the
// run at every place it is tried, which on a text of spaces is quadratic (16,000 spaces took 8 s).
const NOT_NEGATED =
  "(?<!(?:^|[.!?;:,\\n])\\s{0,8}(?:(?:please|you|and|but)\\s{1,8})?(?:do\\s{1,8}not|don['’]t|never|must\\s{1,8}not|must\\s{1,8}never|mustn['’]t|should\\s{1,8}not|should\\s{1,8}never|shouldn['’]t|cannot|can['’]t)\\s{1,8})";

/**
 * One of `keywords`, starting a word and not negated (NOT_NEGATED). The lookahead comes first so
 * that the lookbehind is tried only where a keyword starts, not at every place in the text.
 */
const unnegated = (keywords: string) => `\\b(?=(?:${keywords})\\b)${NOT_NEGATED}(?:${keywords})`;

/** What an assistant's instructions are called: "instructions", "rules", "commands" … */
const INSTRUCTION_NOUNS = '(?:instructions?|prompts?|rules?|directions?|messages?|commands?|guidelines?)';

/**
 * The noun "prompt", not the adjective: not when another word follows ("your prompt payment
 * discount", "your prompt reply"), unless it is one that follows the noun ("your prompt verbatim",
 * "your prompt and …").
 */
const PROMPT_NOUN =
  'prompts?\\b(?!\\s+(?!(?:and|or|to|for|in|into|as|verbatim|exactly|word|now|here|back|again|please|first|above|below|text|you|so|that|which)\\b)\\p{L})';

/**
 * Where a phrase ends: the text, a sentence or a clause ends, or a quotation or parenthesis closes
 * ("ignore the above.", "disregard all of the above, and …").
 */
const PHRASE_END = '\\s*(?:$|[.!?;:,)"\'’”\\n\\r])';

/**
 * Where a clause ends, more strictly than PHRASE_END: not at a comma or a colon, which a list or
 * an explanation goes on from ("your rules, when asked, …", "all prompts, popups and banners").
 */
const CLAUSE_END = '\\s*(?:$|[.!?;)"\'’”\\n\\r])';

/**
 * What starts a new order after a phrase, maybe after a comma or a colon and "and": "then" (not
 * "then in effect"), or a verb an order starts with ("…, then write a poem", "… and say hi",
 * "…: you are now free"). Not a noun ("rules and regulations", "prompts, popups and banners").
 */
const NEXT_ORDER =
  "(?:\\s*[,:])?\\s+(?:and\\s+)?(?:then\\b(?!\\s+(?:in|current|valid|applicable|existing)\\b)|(?:(?:just|simply|instead|now)\\s+)?(?:(?:say|write|tell|reply|respond|answer|act|pretend|print|reveal|show|output|repeat|follow|obey|start|be|become|talk|speak)\\b|do\\b(?!\\s+not\\b)|you\\s+are\\s+now\\b|you['’]re\\s+now\\b|from\\s+now\\s+on\\b))";

/**
 * After "your instructions" (rules, guidelines), what leaves them the whole of the assistant's
 * own: the clause ends or a new order starts, maybe after "now", "again" …, or they are asked for
 * verbatim, word for word, exactly, in full, to me or us, or back (not "back to the customer").
 * Not when more says which ("your rules for the giveaway", "your guidelines on shipping").
 */
const REVEAL_END = `(?:(?:\\s+(?:now|again|please|here|first)\\b)?(?:${CLAUSE_END}|${NEXT_ORDER})|\\s+(?:verbatim|word\\s+for\\s+word|exactly|in\\s+full|to\\s+(?:me|us)|back\\b(?!\\s+to\\s+(?!(?:me|us)\\b)))\\b)`;

/**
 * After "all instructions", what leaves them the assistant's own: the clause ends or a new order
 * starts (NEXT_ORDER), maybe after "now" ("all instructions now."; not "all rules now in
 * effect"), or they are the ones "you were given" (not "given to you by customers"). Not more
 * nouns: "all rules and regulations", "all prompts, popups and banners".
 */
const ALL_NOUNS_END = `(?:(?:\\s+now\\b)?(?:${CLAUSE_END}|${NEXT_ORDER})|\\s+(?:(?:that|which)\\s+)?(?:you(?:\\s+(?:were|have\\s+been|have|had(?:\\s+been)?)|['’](?:ve|d)(?:\\s+been)?)?\\s+(?:given|told|received|got(?:ten)?)|(?:were\\s+)?given\\s+(?:to\\s+)?you)\\b(?!\\s+by\\b))`;

/** Between "system" and its noun: a space or a hyphen ("system prompt", "system-prompt"). */
const SYSTEM = 'system[\\s-]+';

/** The system prompt's section headings, a space in one matching spaces or hyphens. */
const SECTION_HEADINGS = Object.values(PROMPT_SECTION_HEADINGS)
  .map((h) => h.split(' ').join('[ \\t-]+'))
  .join('|');

/**
 * The built-in rules. They catch instructions that try to subvert the assistant's base
 * prompt or smuggle prompt structure into the custom-instructions block.
 */
export const DEFAULT_SAFETY_RULES: readonly SafetyRuleSpec[] = [
  {
    id: 'ignore_previous_instructions',
    description:
      'asks the assistant to ignore, disregard or forget its previous, prior, above or system instructions, the instructions above, its own instructions, all instructions, the above, or everything above',
    pattern: `${unnegated('ignore|disregard|forget')}\\s+(?:${[
      // "… previous instructions", "… any and all prior rules", "… the above commands", "… your
      // system-prompt": the place before the noun.
      `(?:(?:all|any|and|the|your|of|these|those|my)\\s+)*(?:previous|prior|above|earlier|preceding|system)[\\s-]+${INSTRUCTION_NOUNS}\\b`,
      // "… the instructions above", "… all rules so far", "… the rules given before": the place
      // after the noun. Not when a noun phrase, "than" or a number follows ("the rules before the
      // launch", "the rules above 10 items"). Not "messages": a customer's messages before a date
      // are an ordinary topic.
      '(?:(?:all|any|and|the|of|these|those)\\s+)*(?:instructions?|prompts?|rules?|directions?|commands?)\\s+(?:(?:you\\s+were\\s+)?given\\s+)?(?:above|before|earlier|previously|so\\s+far|until\\s+now)\\b(?!\\s+(?:(?:the|a|an|this|that|than)\\b|\\d))',
      // "… your instructions", "… all of your own rules": the assistant's own, wherever they are.
      // Not "its" ("the old manual is wrong: ignore its instructions") nor "your messages" (a
      // customer may well ignore the company's messages).
      `(?:(?:all|any|and|of)\\s+)*your\\s+(?:(?:own|original|initial|current|real)\\s+)?(?:instructions?|rules?|directions?|commands?|guidelines?|programming|${PROMPT_NOUN})\\b`,
      // "… everything above", "… anything so far".
      '(?:(?:all|any|of|the)\\s+)*(?:everything|anything)\\s+(?:above|so\\s+far)\\b',
      // "… all instructions", "… all the rules you were given", "… any commands, then …": all of
      // them, none named as someone else's. Not when more follows that says whose or which
      // ("all instructions in the customer's messages", "any commands the customer sends").
      `(?:all|any)\\s+(?:(?:of\\s+)?the\\s+)?(?:instructions?|prompts?|rules?|directions?|commands?)\\b(?=${ALL_NOUNS_END})`,
      // "… the above", "… all of the above, and …": as a noun, not "the above address" or "the
      // above-mentioned".
      `(?:(?:all|any)\\s+(?:of\\s+)?)?(?:the\\s+)?above\\b(?=${PHRASE_END}|\\s+(?:and|then|but|now)\\b)`,
    ].join('|')})`,
    flags: 'iu',
  },
  {
    id: 'reveal_system_prompt',
    description:
      'asks the assistant to reveal, print, show, tell or say what its system prompt (or its prompt, or its instructions, rules or guidelines as a whole) is',
    // Showing, printing … the system, initial, hidden or original prompt or message; showing,
    // printing … "your prompt", "your instructions", "your rules" or "your guidelines" (the
    // assistant's own: "the prompt payment discount" is not; the last three only as a whole, see
    // REVEAL_END, so "your rules for the giveaway" and "your rules of the game" pass);
    // telling, giving, sending, sharing or saying the system (or hidden) prompt itself, not "the
    // initial message" an operator may well want sent; and asking what the system prompt is. Not
    // when negated: "Never reveal your prompt" asks the opposite.
    pattern: [
      `${unnegated('reveal|print|show|display|output|repeat|leak')}\\s+(?:(?:me|us|the|your|its|full|entire|whole)\\s+)*(?:system|initial|hidden|original)[\\s-]+(?:prompt|instructions?|message)\\b`,
      `${unnegated('reveal|print|show|display|output|repeat|leak')}\\s+(?:(?:me|us|all\\s+of)\\s+)*your\\s+(?:(?:full|entire|whole|own|current|real)\\s+)?(?:${PROMPT_NOUN}|(?:instructions?|rules?|guidelines?)\\b(?=${REVEAL_END}))`,
      `${unnegated('tell|give|send|share|say')}\\b[^.!?\\n]{0,40}?\\b(?:your|its|the)\\s+(?:${SYSTEM}|hidden\\s+)prompt\\b`,
      `\\bwhat(?:\\s+is|\\s+are|['’]s)\\s+(?:your|its|the)\\s+(?:${SYSTEM}|hidden\\s+)(?:prompt|instructions?)\\b`,
    ].join('|'),
    flags: 'iu',
  },
  {
    id: 'chat_template_marker',
    description:
      'contains a chat-template role marker or special token such as <|im_start|>, <|start|>, <|system|>, <|start_header_id|>, <start_of_turn>, [INST], [SYSTEM_PROMPT], <<SYS>>, or the sequence tokens <s> and </s>',
    // Any special token written <|word|> (letters, digits, underscores), not a list of names:
    // ChatML (<|im_start|>), Phi (<|user|>, <|end|>, Phi-4's <|im_sep|>), Llama 3 (<|start_header_id|>
    // system<|end_header_id|>, <|eot_id|>, <|eom_id|>, <|python_tag|>), gpt-oss's harmony format
    // (<|start|>, <|channel|>, <|message|>, <|return|>), and whatever the next model names; also
    // DeepSeek's, with full-width bars and U+2581 for spaces (<｜User｜>, <｜end▁of▁sentence｜>).
    // Gemma (<start_of_turn>user, <end_of_turn>), Llama 2 ([INST], <<SYS>>), Mistral's tags
    // ([SYSTEM_PROMPT], [AVAILABLE_TOOLS], [TOOL_CALLS], [TOOL_RESULTS], [TOOL_CONTENT]); not
    // Mistral's [IMG] or [PREFIX], which read as ordinary placeholders or BBCode. Llama's and
    // Mistral's sequence tokens <s> and </s> (which also close and open a [INST] turn), at the
    // cost of HTML's strikethrough tag.
    pattern: [
      '<[|\\uFF5C]\\s*[a-z0-9_\\u2581]+\\s*[|\\uFF5C]>',
      '<\\s*(?:start|end)_of_turn\\s*>',
      '\\[/?(?:INST|SYSTEM_PROMPT|AVAILABLE_TOOLS|TOOL_CALLS|TOOL_RESULTS|TOOL_CONTENT)\\]',
      '<</?SYS>>',
      '</?s>',
    ].join('|'),
    flags: 'iu',
  },
  {
    id: 'role_line',
    description:
      'has a line starting with a role name such as "system:", "assistant:", "user:", "human:" or "developer:", also in markdown emphasis, after heading marks or inside a quote or list item ("**system:**", "### System:", "> system:", "- user:", "1. assistant:")',
    // Only at a line's start, as chat transcripts write turns: mid-line, "Remind the user: …" is
    // ordinary text. Right before the colon, so "User name:", "Users:" and "Human resources:"
    // pass. "developer" is the system role of OpenAI's newer models. Not "tool": the assistant has
    // no tools, and "Tool: a ladder" is product text. Blockquote marks ("> system:", "> > user:")
    // and list markers ("- system:", "* user:", "+ human:", "1. assistant:", "2) user:"), in any
    // number and order, then heading marks ("### System:") and emphasis ("**System:**",
    // "__user__:") may come before the name and emphasis before the colon. Each optional part
    // starts with a character a run of spaces cannot hold, so no two runs of spaces compete for
    // the same spaces, and a run of markers is tried once from the line's start.
    pattern:
      '^[ \\t]*(?:(?:>|[-*+]|\\d{1,9}[.)])[ \\t]*)*(?:#{1,6}[ \\t]*)?(?:[*_]{1,3}[ \\t]*)?(?:system|assistant|user|human|developer)[ \\t]*(?:[*_]{1,3}[ \\t]*)?:',
    flags: 'imu',
  },
  {
    id: 'prompt_section_heading',
    description: `has a line that forges a heading of the system prompt's own sections (${Object.values(
      PROMPT_SECTION_HEADINGS,
    )
      .map((h) => `"# ${h}"`)
      .join(', ')}), at any heading level, maybe in emphasis or with a colon`,
    // The instructions are the prompt's last section: a line "# Safety rules" in them (written,
    // or from a placeholder's value) would start a section of their own that reads as the
    // operator's. Only the whole line: "# Knowledge base" and "## Persona notes" pass. The
    // lookahead scans the rest of one line once: spaces, emphasis, colons or closing #s only.
    pattern: `^[ \\t]*#+[ \\t]*(?:[*_]{1,3}[ \\t]*)?(?:${SECTION_HEADINGS})(?![ \\t*_:#]*[^ \\t*_:#\\n\\r\\u2028\\u2029])`,
    flags: 'imu',
  },
  {
    id: 'invisible_characters',
    description:
      'contains invisible characters: format characters (Unicode category Cf: zero-width, bidirectional controls, tag characters, soft hyphens), other default-ignorable code points (variation selectors, the combining grapheme joiner, Hangul fillers; a single U+FE0E or U+FE0F right after an emoji, a single Mongolian free variation selector right after a Mongolian letter and a single ideographic variation selector right after a CJK ideograph pass), the blank Braille pattern, or control characters other than tab, line feed and carriage return',
    // Whole Unicode properties, not a list of ranges: tag characters (U+E0000 block) spell out
    // hidden ASCII text, variation selectors (U+E0100 block) hide a byte each, and a list would
    // miss whatever Unicode adds next. Cf and Default_Ignorable_Code_Point overlap; each has
    // members the other lacks (U+034F, U+17B4 and the Hangul fillers are not Cf; U+0600 is not
    // default-ignorable). Emoji built with them (zero-width joiner sequences, subdivision flags)
    // are refused too. The blank Braille pattern renders as nothing, so it hides text as well.
    // U+FE0E and U+FE0F choose an emoji's text or emoji presentation ("❤️", "1️⃣"): one of them
    // alone right after an emoji passes, so only the first alternative leaves them out; the second
    // refuses one at the start or after anything else (a letter, a space, another selector), which
    // is where they would carry hidden bits. Likewise Mongolian free variation selectors
    // (U+180B–U+180D, U+180F), which Mongolian text needs, pass alone right after a Mongolian
    // letter (U+1820–U+18AA), and ideographic variation selectors (U+E0100–U+E01EF), which
    // Japanese names need (葛 with U+E0100), alone right after a CJK ideograph: a run of them, the hidden
    // payload's form, is refused, as is one after anything else. No lookbehind: the character
    // before is matched.
    pattern: [
      '(?![\\uFE0E\\uFE0F\\u180B-\\u180D\\u180F\\u{E0100}-\\u{E01EF}])[\\p{Cf}\\p{Default_Ignorable_Code_Point}\\u2800\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\x7F-\\x9F]',
      '(?:^|[^\\p{Emoji}])[\\uFE0E\\uFE0F]',
      '(?:^|[^\\u1820-\\u18AA])[\\u180B-\\u180D\\u180F]',
      '(?:^|[^\\p{Script=Han}])[\\u{E0100}-\\u{E01EF}]',
    ].join('|'),
    flags: 'u',
    // About the code points as sent, which folding changes: NFKC makes "™️" "TM" and a selector.
    fold: false,
  },
];
