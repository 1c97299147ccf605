/**
 * Device form problems in an operator's words. The admin schemas and the device rules report JSON
 * pointers and validator wording (`/knowledge/0/content must NOT have fewer than 1 characters`);
 * the form needs one plain sentence under each field (whose label, such as "Entry 2 title", numbers
 * entries as people count, and names the field in the error summary).
 */
import type { ValidationProblem } from '@outreach/contracts';
import { deviceFields as F } from '../http/admin.schemas';
import type { FieldErrors } from './forms';

/** A text over its length limit. Shared with the recipient forms. */
export const tooLong = (max: number) => `Use at most ${max.toLocaleString('en-US')} characters.`;
const colour = 'Choose a colour, written as #rrggbb (for example #0b57d0).';
/** Shared with the recipient forms' messages for the texts customers see. */
export const PAGE_TEXT_ADVICE =
  'Remove the invisible control characters (NUL, or text-direction controls U+202A to U+202E and U+2066 to U+2069): they could make the text read differently to customers.';

/**
 * A text refused as not storable: a browser form cannot send a lone surrogate, so it holds a NUL.
 * Shared with the recipient forms.
 */
export const NUL_ADVICE = 'Remove the NUL character (an invisible control character) from the text.';

/**
 * A name's problems by schema rule. Every name of the admin API (a device's, a project's) has the
 * same schema; shared with the project forms.
 */
export const NAME_MESSAGES: Record<string, string> = {
  required: 'Enter a name.',
  minLength: 'Enter a name.',
  maxLength: tooLong(F.name.maxLength),
  format: NUL_ADVICE,
};

/** Message per form field and schema rule; limits come from the schema itself. */
const MESSAGES: Record<string, Record<string, string>> = {
  name: NAME_MESSAGES,
  'styling.title': { maxLength: tooLong(F.styling.properties.title.maxLength), format: PAGE_TEXT_ADVICE },
  'styling.primaryColor': { pattern: colour },
  'styling.backgroundColor': { pattern: colour },
  'styling.logoUrl': {
    format:
      'Enter an address that starts with https:// (or http://), for example https://example.com/logo.png.',
    maxLength: tooLong(F.styling.properties.logoUrl.maxLength),
  },
  languages: {
    pattern: 'Write language codes such as en, fr or de-CH, separated by commas.',
    uniqueItems: 'Name each language once.',
    maxItems: `List at most ${F.languages.maxItems} languages.`,
  },
  defaultLanguage: {
    pattern: 'Write a language code such as en or de-CH.',
    oneOfLanguages: 'Choose one of the languages listed above.',
  },
  'voice.voiceName': { maxLength: tooLong(F.voice.properties.voiceName.maxLength), format: NUL_ADVICE },
  persona: { maxLength: tooLong(F.persona.maxLength), format: NUL_ADVICE },
  customInstructions: { maxLength: tooLong(F.customInstructions.maxLength), format: NUL_ADVICE },
  ipAllowList: { maxItems: `List at most ${F.ipAllowList.maxItems} networks.` },
  knowledge: { maxItems: `Keep at most ${F.knowledge.maxItems} entries.` },
};

const ENTRY = F.knowledge.items.properties;
const KNOWLEDGE: Record<string, Record<string, string>> = {
  title: {
    required: 'Give it a title.',
    minLength: 'Give it a title.',
    maxLength: tooLong(ENTRY.title.maxLength),
    format: NUL_ADVICE,
  },
  content: {
    required: 'Write its content.',
    minLength: 'Write its content.',
    maxLength: tooLong(ENTRY.content.maxLength),
    format: NUL_ADVICE,
  },
};

/** The form field a pointer names: `/knowledge/1/title` → `knowledge.1.title`, else null. */
function fieldOf(pointer: string): string | null {
  const [top, second, third] = pointer.split('/').slice(1);
  if (top === 'knowledge' && second !== undefined && third !== undefined)
    return `knowledge.${second}.${third}`;
  if (top === 'ipAllowList' || top === 'languages' || top === 'knowledge') return top;
  if ((top === 'styling' || top === 'voice') && second !== undefined) return `${top}.${second}`;
  return top ?? null;
}

/**
 * Every problem as field name → message, the first problem of a field winning. Bad allow-list
 * lines are named together, quoting what the operator typed.
 */
export function deviceFieldErrors(
  problems: ValidationProblem[],
  input: { ipAllowList?: string[] },
): FieldErrors {
  const errors: FieldErrors = {};
  const badLines = new Set<string>();
  for (const p of problems) {
    const name = fieldOf(p.pointer);
    if (name === 'ipAllowList' && (p.rule === 'cidr' || p.rule === 'format')) {
      badLines.add(input.ipAllowList?.[Number(p.pointer.split('/')[2])] ?? '');
      continue;
    }
    const entry = name?.startsWith('knowledge.') ? name.split('.') : null;
    const message = entry
      ? (KNOWLEDGE[entry[2]]?.[p.rule] ?? `This ${p.message}.`)
      : name && MESSAGES[name]
        ? (MESSAGES[name][p.rule] ?? `This ${p.message}.`)
        : `${p.pointer.slice(1) || 'The device'} ${p.message}.`;
    const key = entry || (name && MESSAGES[name]) ? (name as string) : '_';
    errors[key] ??= message;
  }
  if (badLines.size > 0) {
    errors.ipAllowList ??= `These lines are not CIDR blocks: ${[...badLines].join(', ')}. Write blocks such as 203.0.113.0/24 or 2001:db8::/32.`;
  }
  return errors;
}
