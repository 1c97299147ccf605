import { PAGE_TEXT_MESSAGE, STORABLE_TEXT_MESSAGE } from '@outreach/contracts';
import { deviceFieldErrors } from './device-errors';

describe('device form errors', () => {
  it('words each problem for its own field and numbers knowledge entries from 1', () => {
    const errors = deviceFieldErrors(
      [
        { pointer: '/persona', rule: 'maxLength', message: 'must NOT have more than 4000 characters' },
        {
          pointer: '/styling/backgroundColor',
          rule: 'pattern',
          message: 'must match pattern "^#[0-9A-Fa-f]{6}$"',
        },
        {
          pointer: '/knowledge/0/title',
          rule: 'maxLength',
          message: 'must NOT have more than 200 characters',
        },
        {
          pointer: '/knowledge/2/content',
          rule: 'minLength',
          message: 'must NOT have fewer than 1 characters',
        },
        { pointer: '/ipAllowList/1', rule: 'format', message: 'must match format "cidr"' },
        { pointer: '/ipAllowList/1', rule: 'cidr', message: 'is not an IPv4 or IPv6 CIDR block' },
        { pointer: '/ipAllowList/2', rule: 'cidr', message: 'is not an IPv4 or IPv6 CIDR block' },
      ],
      { ipAllowList: ['10.0.0.0/8', 'office', '300.1.1.1/8'] },
    );
    expect(errors).toEqual({
      persona: 'Use at most 4,000 characters.',
      'styling.backgroundColor': 'Choose a colour, written as #rrggbb (for example #0b57d0).',
      'knowledge.0.title': 'Use at most 200 characters.',
      'knowledge.2.content': 'Write its content.',
      ipAllowList:
        'These lines are not CIDR blocks: office, 300.1.1.1/8. Write blocks such as 203.0.113.0/24 or 2001:db8::/32.',
    });
  });

  it('asks to remove text-direction controls from the title customers see', () => {
    const errors = deviceFieldErrors(
      [{ pointer: '/styling/title', rule: 'format', message: PAGE_TEXT_MESSAGE }],
      {},
    );
    expect(errors['styling.title']).toMatch(/^Remove the invisible control characters .*U\+202A to U\+202E/);
  });

  it('asks to remove a NUL from any text of the form, in words', () => {
    const format = (pointer: string) => ({ pointer, rule: 'format', message: STORABLE_TEXT_MESSAGE });
    const errors = deviceFieldErrors(
      [format('/name'), format('/persona'), format('/knowledge/0/content'), format('/voice/voiceName')],
      {},
    );
    const advice = 'Remove the NUL character (an invisible control character) from the text.';
    expect(errors).toEqual({
      name: advice,
      persona: advice,
      'knowledge.0.content': advice,
      'voice.voiceName': advice,
    });
  });

  it('keeps the first problem of a field and puts what no field shows in the general slot', () => {
    const errors = deviceFieldErrors(
      [
        { pointer: '/name', rule: 'required', message: 'is required' },
        { pointer: '/name', rule: 'minLength', message: 'must NOT have fewer than 1 characters' },
        { pointer: '/styling/font', rule: 'additionalProperties', message: 'is not a known field' },
      ],
      {},
    );
    expect(errors).toEqual({ name: 'Enter a name.', _: 'styling/font is not a known field.' });
  });
});
