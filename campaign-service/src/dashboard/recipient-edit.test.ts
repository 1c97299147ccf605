import { PAGE_TEXT_MESSAGE, type RecipientJson } from '@outreach/contracts';
import { AppError } from '@outreach/platform';
import { formValuesOf, patchFieldErrors, recipientPatch } from './recipient-edit';

const stored = {
  label: 'Ada',
  injectionMode: 'append',
  injectionInstructions: 'Greet Ada.\nBe brief.',
  maxTotalInteractions: 5,
  maxInteractionsPerWindow: null,
  windowSeconds: null,
  disabledMessage: null,
  cooldownMessage: 'Later, please.',
} as unknown as RecipientJson;

describe('recipient edit form', () => {
  it('sends nothing for a form saved as shown, line breaks as a browser sends them', () => {
    const values = formValuesOf(stored);
    values.injectionInstructions = 'Greet Ada.\r\nBe brief.\r\n';
    expect(recipientPatch(values, formValuesOf(stored))).toEqual({ patch: {}, errors: {} });
  });

  it('sends only the changed fields, an emptied one as null', () => {
    const values = {
      ...formValuesOf(stored),
      label: ' Ada King ',
      injectionMode: 'replace',
      maxTotalInteractions: '',
      cooldownMessage: '',
    };
    expect(recipientPatch(values, formValuesOf(stored))).toEqual({
      patch: {
        label: 'Ada King',
        injectionMode: 'replace',
        maxTotalInteractions: null,
        cooldownMessage: null,
      },
      errors: {},
    });
  });

  it('leaves alone what someone else changed since the form was shown, where the operator did not', () => {
    const shown = formValuesOf(stored);
    // Since the form opened, an API sync raised the limit and added to the instructions.
    const values = { ...shown, label: 'Ada King' };
    expect(recipientPatch(values, shown)).toEqual({ patch: { label: 'Ada King' }, errors: {} });
  });

  it('refuses a limit that is not a whole number under its field', () => {
    const { errors } = recipientPatch(
      { ...formValuesOf(stored), windowSeconds: '1.5' },
      formValuesOf(stored),
    );
    expect(errors).toEqual({ windowSeconds: 'Enter a whole number, or leave it empty.' });
  });

  it('refuses a limit below 1 as such, not as something other than a whole number', () => {
    const { patch, errors } = recipientPatch(
      {
        ...formValuesOf(stored),
        maxTotalInteractions: '-1',
        maxInteractionsPerWindow: '0',
        windowSeconds: '-30',
      },
      formValuesOf(stored),
    );
    expect(errors).toEqual({
      maxTotalInteractions: 'Enter 1 or more, or leave it empty for no limit.',
      maxInteractionsPerWindow: 'Enter 1 or more, or leave it empty for no limit.',
      windowSeconds: 'Enter 1 or more seconds, or leave it empty.',
    });
    expect(patch).toEqual({});
  });

  it('names the right limit of too long instructions: replace mode, or the bound on any', () => {
    const refusal = (limit?: number) =>
      new AppError('invalid_request', 'too long', {
        details: {
          pointer: '/injectionInstructions',
          rule: 'maxLength',
          ...(limit ? { limit } : {}),
          problems: [{ pointer: '/injectionInstructions', rule: 'maxLength', message: 'too long' }],
        },
      });
    expect(patchFieldErrors(refusal(7500)).injectionInstructions).toMatch(
      /^In replace mode .* 7,500 characters/,
    );
    expect(patchFieldErrors(refusal(256_000)).injectionInstructions).toMatch(
      /^The instructions may have at most 256,000/,
    );
    expect(patchFieldErrors(refusal()).injectionInstructions).toMatch(
      /^The instructions may have at most 256,000/,
    );
  });

  it("says a refused PATCH's problems in words under their fields", () => {
    const tooLong = new AppError('invalid_request', 'injectionInstructions must have at most 500 words', {
      details: {
        pointer: '/injectionInstructions',
        rule: 'maxWords',
        limit: 500,
        actual: 612,
        problems: [
          { pointer: '/injectionInstructions', rule: 'maxWords', message: 'must have at most 500 words' },
        ],
      },
    });
    expect(patchFieldErrors(tooLong)).toEqual({
      injectionInstructions:
        'In append mode the instructions may have at most 500 words, placeholders filled in; these have 612.',
    });
    const label = new AppError('invalid_request', '/label must NOT have more than 191 characters', {
      details: {
        problems: [
          { pointer: '/label', rule: 'maxLength', message: 'must NOT have more than 191 characters' },
        ],
      },
    });
    expect(patchFieldErrors(label)).toEqual({ label: 'Use at most 191 characters.' });
    const other = new AppError('invalid_request', 'The body is empty.', { details: {} });
    expect(patchFieldErrors(other)).toEqual({ _: 'The body is empty.' });
  });

  it('says which invisible characters to remove from a text customers see', () => {
    const refused = new AppError('invalid_request', 'The request is invalid.', {
      details: {
        problems: [
          { pointer: '/disabledMessage', rule: 'format', message: PAGE_TEXT_MESSAGE },
          { pointer: '/label', rule: 'format', message: 'must not contain the NUL character (U+0000)' },
        ],
      },
    });
    const errors = patchFieldErrors(refused);
    expect(errors.disabledMessage).toMatch(
      /text-direction controls U\+202A to U\+202E and U\+2066 to U\+2069/,
    );
    expect(errors.label).toBe('Remove the NUL character (an invisible control character) from the text.');
  });

  it('leaves a conflict or an outage to the error page', () => {
    const conflict = new AppError('conflict', 'The campaign is active.');
    expect(() => patchFieldErrors(conflict)).toThrow(conflict);
  });
});
