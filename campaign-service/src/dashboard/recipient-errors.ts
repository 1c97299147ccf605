/**
 * Recipient refusals in an operator's words, for the new-recipient form, the edit form and the CSV
 * import alike. The recipient service refuses a create item or a PATCH with its problems as JSON
 * pointers and validator wording (`/metadata must NOT have more than 24 properties`); a page needs
 * one plain sentence per field, every problem at once, each under the field it is about.
 */
import { LIMITS, type ValidationProblem, validator } from '@outreach/contracts';
import { AppError } from '@outreach/platform';
import { NUL_ADVICE, PAGE_TEXT_ADVICE, tooLong } from './device-errors';
import type { FieldErrors } from './forms';

/** A refusal as the service reports it: an item's error result, or a refused PATCH. */
export interface RecipientRefusal {
  message: string;
  details?: Record<string, unknown>;
}

/** The fields of a create item, in the order the new-recipient form shows them. */
export const CREATE_FIELDS = [
  'externalId',
  'label',
  'metadata',
  'isActive',
  'injectionMode',
  'injectionInstructions',
  'maxTotalInteractions',
  'maxInteractionsPerWindow',
  'windowSeconds',
  'disabledMessage',
  'cooldownMessage',
] as const;

/**
 * What each built-in safety rule refuses, short enough for a sentence; its `description` (in the
 * API's refusal and the OpenAPI document) lists every form the rule catches.
 */
export const SAFETY_RULE_MEANINGS: Readonly<Record<string, string>> = {
  ignore_previous_instructions: 'tells the assistant to ignore its earlier instructions',
  reveal_system_prompt: 'asks the assistant to reveal its system prompt',
  chat_template_marker: 'contains a chat-template marker such as <|im_start|> or [INST]',
  role_line: 'has a line starting with a role name such as “system:”',
  prompt_section_heading: 'has a line that reads as a heading of the system prompt’s own sections',
  invisible_characters: 'contains invisible characters',
};

const number = (n: number) => n.toLocaleString('en-US');
const SAFETY_PREFIX = 'was refused by the safety check:';
const lowerFirst = (s: string) => `${s[0].toLowerCase()}${s.slice(1)}`;

/** The instructions refused by the safety check, naming the rule by what it means. */
function safetyInWords(p: ValidationProblem, details: Record<string, unknown>): string {
  const rule = typeof details.rule === 'string' ? details.rule : p.rule;
  // A rule of the install's own (SAFETY_RULES_FILE) is known only by its description.
  const meaning =
    SAFETY_RULE_MEANINGS[rule] ??
    (p.message.startsWith(SAFETY_PREFIX) ? p.message.slice(SAFETY_PREFIX.length).trim() : undefined);
  return meaning
    ? `The safety check refused these instructions: the text ${meaning}. Reword them.`
    : 'The safety check refused these instructions. Reword them.';
}

/** A metadata key's problem (`/metadata/<key>`), naming the key as typed. */
function metadataInWords(key: string, p: ValidationProblem): string {
  if (p.rule === 'propertyNames') {
    return /^[A-Za-z0-9_-]+$/.test(key) && key.length <= LIMITS.metadataKeyLength
      ? `The metadata key “${key}” is reserved: choose another.`
      : `The metadata key “${key}” may use only letters, digits, _ and -, at most ${LIMITS.metadataKeyLength} of them.`;
  }
  if (p.rule === 'maxLength')
    return `The value of “${key}” may have at most ${number(LIMITS.metadataValueLength)} characters.`;
  if (p.rule === 'format') return `In the value of “${key}”, ${lowerFirst(NUL_ADVICE)}`;
  return `The value of “${key}” was refused: it ${p.message}.`;
}

/** One refused field in an operator's words; the service's message only where none is known. */
function inWords(name: string, p: ValidationProblem, details: Record<string, unknown>): string {
  if (p.rule === 'dependentRequired') {
    const missing = name === 'windowSeconds' ? 'the window length' : 'the conversations per window';
    return `Enter ${missing} as well: a window limit needs both numbers, or leave both empty.`;
  }
  // A form cannot carry a lone surrogate (the browser and URLSearchParams make it U+FFFD), nor can
  // a CSV file read as text, so a format refusal here is a NUL, or in a message shown on the link
  // page a bidi control.
  if (p.rule === 'format' && name !== 'metadata') {
    return name === 'disabledMessage' || name === 'cooldownMessage' ? PAGE_TEXT_ADVICE : NUL_ADVICE;
  }
  switch (name) {
    case 'maxTotalInteractions':
    case 'maxInteractionsPerWindow':
      return `Enter a whole number from 1 to ${number(LIMITS.maxInteractionLimit)}, or leave it empty for no limit.`;
    case 'windowSeconds':
      return `Enter a number of seconds from 1 to ${number(LIMITS.maxWindowSeconds)} (a year), or leave it empty.`;
    case 'injectionMode':
      return 'Use append (added to the device’s instructions) or replace (instead of them).';
    case 'isActive':
      return 'Write true or false (or yes or no).';
    case 'metadata': {
      const key = p.pointer.split('/')[2];
      if (key !== undefined) return metadataInWords(key.replace(/~1/g, '/').replace(/~0/g, '~'), p);
      if (p.rule === 'maxProperties') return `Give at most ${LIMITS.metadataKeys} metadata keys.`;
      break;
    }
    case 'injectionInstructions': {
      if (details.reason === 'safety_refused' || p.message.startsWith(SAFETY_PREFIX)) {
        return safetyInWords(p, details);
      }
      const actual = typeof details.actual === 'number' ? `; these have ${number(details.actual)}` : '';
      if (p.rule === 'maxWords') {
        return `In append mode the instructions may have at most ${number(LIMITS.appendWords)} words, placeholders filled in${actual}.`;
      }
      if (p.rule === 'maxLength') {
        // Replace mode's own limit, or the bound on any instructions (as sent, or stored in append mode).
        return details.limit === LIMITS.replaceChars
          ? `In replace mode the instructions may have at most ${number(LIMITS.replaceChars)} characters, placeholders filled in${actual}.`
          : `The instructions may have at most ${number(LIMITS.instructionsChars)} characters${actual}.`;
      }
      break;
    }
    case 'externalId':
      if (p.rule === 'maxLength') return tooLong(LIMITS.externalIdLength);
      if (p.rule === 'minLength') return 'Enter an external id, or leave it out.';
      break;
    case 'label':
      if (p.rule === 'maxLength') return tooLong(LIMITS.labelLength);
      break;
    case 'disabledMessage':
    case 'cooldownMessage':
      if (p.rule === 'maxLength') return tooLong(LIMITS.messageLength);
      break;
  }
  return `This was refused: it ${p.message}.`;
}

/**
 * Every problem of a refused recipient item or PATCH as field name → message in words, each under
 * the field it is about (of `fields`); what is about no such field goes under `_`. The first
 * problem of a field wins (a number-or-null field may fail in both branches: the first says
 * more), bar the metadata, whose problems name their keys and are all kept.
 */
export function recipientFieldErrors(refusal: RecipientRefusal, fields: readonly string[]): FieldErrors {
  const details = refusal.details ?? {};
  const problems = Array.isArray(details.problems) ? (details.problems as ValidationProblem[]) : [];
  const errors: FieldErrors = {};
  for (const p of problems) {
    const name = p.pointer.split('/')[1] ?? '';
    if (!fields.includes(name)) {
      errors._ ??= `${p.pointer.slice(1) || 'The recipient'} ${p.message}.`;
      continue;
    }
    const message = inWords(name, p, details);
    if (errors[name] === undefined) errors[name] = message;
    else if (name === 'metadata' && !errors[name].includes(message)) errors[name] += ` ${message}`;
  }
  if (Object.keys(errors).length === 0) errors._ = refusal.message;
  return errors;
}

/**
 * The problems the API's own schema (`create-item` or `patch`) finds in `body`, in words. A form
 * that refuses a value itself checks the rest with the schema the service applies, so that every
 * problem is said at once, not the form's first and the service's on the next try.
 */
export function schemaFieldErrors(
  schema: 'create-item' | 'patch',
  body: Record<string, unknown>,
  fields: readonly string[],
): FieldErrors {
  if (Object.keys(body).length === 0) return {};
  const problems = validator(schema)(body);
  return problems.length ? recipientFieldErrors({ message: '', details: { problems } }, fields) : {};
}

/** An item's problems as one line of text (the CSV import's per-row detail), fields named as mapped. */
export function problemsInWords(refusal: RecipientRefusal): string {
  return Object.entries(recipientFieldErrors(refusal, CREATE_FIELDS))
    .map(([name, message]) => (name === '_' ? message : `${name}: ${message}`))
    .join(' ');
}

/**
 * A create refused because the campaign holds as many recipients as its cap allows, in words for
 * one recipient made on the form; undefined for any other refusal.
 */
export function capRefusalInWords(err: unknown): string | undefined {
  if (!(err instanceof AppError) || err.code !== 'conflict' || err.details.reason !== 'cap_exceeded')
    return undefined;
  const { cap, existing } = err.details as { cap?: unknown; existing?: unknown };
  if (typeof cap !== 'number') return undefined;
  const holds =
    typeof existing === 'number' && existing > cap
      ? `This campaign holds ${number(existing)} recipients, more than its recipient cap of ${number(cap)}.`
      : `This campaign already holds ${number(cap)} ${cap === 1 ? 'recipient' : 'recipients'}, the most its recipient cap allows.`;
  return `${holds} To add one, raise the cap on the campaign's edit page, or delete a recipient.`;
}
