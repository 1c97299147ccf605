import { DEFAULT_SAFETY_RULES } from '@outreach/contracts';
import { AppError } from '@outreach/platform';
import { EDIT_FIELDS } from './recipient-edit';
import {
  CREATE_FIELDS,
  capRefusalInWords,
  problemsInWords,
  recipientFieldErrors,
  SAFETY_RULE_MEANINGS,
  schemaFieldErrors,
} from './recipient-errors';

/** An item's error result as the recipient service reports it. */
const refusal = (problems: { pointer: string; rule: string; message: string }[], extra = {}) => ({
  message: `${problems[0].pointer} ${problems[0].message}`,
  details: { pointer: problems[0].pointer, rule: problems[0].rule, problems, ...extra },
});

describe('recipient refusals in words', () => {
  it('says every problem at once, each under its own field, none with a JSON pointer', () => {
    const errors = recipientFieldErrors(
      refusal([
        { pointer: '/label', rule: 'maxLength', message: 'must NOT have more than 191 characters' },
        {
          pointer: '/disabledMessage',
          rule: 'maxLength',
          message: 'must NOT have more than 2000 characters',
        },
        { pointer: '/metadata', rule: 'maxProperties', message: 'must NOT have more than 24 properties' },
        { pointer: '/windowSeconds', rule: 'maximum', message: 'must be <= 31536000' },
        { pointer: '/isActive', rule: 'type', message: 'must be boolean' },
      ]),
      CREATE_FIELDS,
    );
    expect(errors).toEqual({
      label: 'Use at most 191 characters.',
      disabledMessage: 'Use at most 2,000 characters.',
      metadata: 'Give at most 24 metadata keys.',
      windowSeconds: 'Enter a number of seconds from 1 to 31,536,000 (a year), or leave it empty.',
      isActive: 'Write true or false (or yes or no).',
    });
  });

  it('names each metadata key refused, as typed', () => {
    const errors = recipientFieldErrors(
      refusal([
        { pointer: '/metadata/home~1town', rule: 'propertyNames', message: 'is not an allowed key' },
        { pointer: '/metadata/__proto__', rule: 'propertyNames', message: 'is not an allowed key' },
      ]),
      CREATE_FIELDS,
    );
    expect(errors.metadata).toBe(
      'The metadata key “home/town” may use only letters, digits, _ and -, at most 64 of them. The metadata key “__proto__” is reserved: choose another.',
    );
    expect(
      recipientFieldErrors(
        refusal([
          { pointer: '/metadata/city', rule: 'maxLength', message: 'must be at most 500 characters' },
        ]),
        CREATE_FIELDS,
      ),
    ).toEqual({ metadata: 'The value of “city” may have at most 500 characters.' });
  });

  it("says a safety refusal in one short sentence naming the rule's meaning, never its whole description", () => {
    const rule = DEFAULT_SAFETY_RULES.find((r) => r.id === 'ignore_previous_instructions')!;
    const message = `was refused by the safety check: ${rule.description}`;
    const errors = recipientFieldErrors(
      refusal([{ pointer: '/injectionInstructions', rule: rule.id, message }], {
        reason: 'safety_refused',
        rule: rule.id,
      }),
      CREATE_FIELDS,
    );
    expect(errors).toEqual({
      injectionInstructions:
        'The safety check refused these instructions: the text tells the assistant to ignore its earlier instructions. Reword them.',
    });
    // A rule of the install's own is named by its description, once.
    const own = recipientFieldErrors(
      refusal(
        [
          {
            pointer: '/injectionInstructions',
            rule: 'no_prices',
            message: 'was refused by the safety check: names a price',
          },
        ],
        { reason: 'safety_refused', rule: 'no_prices' },
      ),
      EDIT_FIELDS,
    );
    expect(own.injectionInstructions).toBe(
      'The safety check refused these instructions: the text names a price. Reword them.',
    );
  });

  it('knows what every built-in safety rule means', () => {
    expect(DEFAULT_SAFETY_RULES.map((r) => r.id).filter((id) => !SAFETY_RULE_MEANINGS[id])).toEqual([]);
  });

  it("checks the rest of a form against the API's schema, in words", () => {
    expect(
      schemaFieldErrors(
        'create-item',
        { label: 'x'.repeat(192), windowSeconds: 99_999_999_999 },
        CREATE_FIELDS,
      ),
    ).toEqual({
      label: 'Use at most 191 characters.',
      windowSeconds: 'Enter a number of seconds from 1 to 31,536,000 (a year), or leave it empty.',
    });
    expect(schemaFieldErrors('patch', {}, EDIT_FIELDS)).toEqual({});
    expect(schemaFieldErrors('patch', { label: 'Ada' }, EDIT_FIELDS)).toEqual({});
  });

  it("says an import row's problems in words on one line, fields named as mapped", () => {
    const line = problemsInWords(
      refusal([
        { pointer: '/isActive', rule: 'type', message: 'must be boolean' },
        { pointer: '/maxTotalInteractions', rule: 'type', message: 'must be integer or null' },
      ]),
    );
    expect(line).toBe(
      'isActive: Write true or false (or yes or no). maxTotalInteractions: Enter a whole number from 1 to 1,000,000,000, or leave it empty for no limit.',
    );
    expect(line).not.toMatch(/\/isActive|must be/);
  });

  it('says a cap refusal of one recipient as what the campaign holds, not a batch', () => {
    const full = new AppError('conflict', 'The batch would exceed the campaign recipient cap.', {
      details: { reason: 'cap_exceeded', cap: 3, existing: 3, requested: 1 },
    });
    expect(capRefusalInWords(full)).toBe(
      "This campaign already holds 3 recipients, the most its recipient cap allows. To add one, raise the cap on the campaign's edit page, or delete a recipient.",
    );
    const lowered = new AppError('conflict', 'The batch would exceed the campaign recipient cap.', {
      details: { reason: 'cap_exceeded', cap: 2, existing: 5, requested: 1 },
    });
    expect(capRefusalInWords(lowered)).toMatch(
      /^This campaign holds 5 recipients, more than its recipient cap of 2\./,
    );
    expect(capRefusalInWords(new AppError('conflict', 'x', { details: { reason: 'not_editable' } }))).toBe(
      undefined,
    );
  });
});
