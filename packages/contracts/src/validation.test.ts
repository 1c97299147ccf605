import { PAGE_TEXT_MESSAGE } from './text-formats';
import { validator } from './validation';

describe('validator', () => {
  it('says every type a value may have where it has none of them, and how many fields a body needs', () => {
    expect(validator('create-item')({ metadata: { a: { b: 1 } } })).toEqual([
      { pointer: '/metadata/a', rule: 'type', message: 'must be string, number or boolean' },
    ]);
    // A long text fails its own branch by its length: that is what is said first.
    expect(validator('create-item')({ metadata: { a: 'x'.repeat(501) } })[0]).toMatchObject({
      pointer: '/metadata/a',
      rule: 'maxLength',
    });
    expect(validator('patch')({})).toEqual([
      { pointer: '', rule: 'minProperties', message: 'must have at least 1 field' },
    ]);
  });

  it("tells a nullable field's value what is wrong with it, not that it must be null", () => {
    expect(validator('create-item')({ maxTotalInteractions: 0 })).toEqual([
      { pointer: '/maxTotalInteractions', rule: 'minimum', message: 'must be >= 1' },
    ]);
    expect(validator('patch')({ label: 'Ada\u0000', windowSeconds: 31_536_001 })).toEqual([
      {
        pointer: '/label',
        rule: 'format',
        message: 'must not contain the NUL character (U+0000) or a lone UTF-16 surrogate',
      },
      { pointer: '/windowSeconds', rule: 'maximum', message: 'must be <= 31536000' },
    ]);
    // A text too long for a metadata value is not also told to be a number or a boolean, whatever
    // the other values checked by the same schema are.
    expect(validator('create-item')({ metadata: { a: 'x'.repeat(501) } })).toEqual([
      { pointer: '/metadata/a', rule: 'maxLength', message: 'must NOT have more than 500 characters' },
    ]);
    expect(validator('create-item')({ metadata: { a: 'x'.repeat(501), b: null } })).toEqual([
      { pointer: '/metadata/a', rule: 'maxLength', message: 'must NOT have more than 500 characters' },
      { pointer: '/metadata/b', rule: 'type', message: 'must be string, number or boolean' },
    ]);
    // A value of none of the types is still told every type it may have.
    expect(validator('patch')({ maxTotalInteractions: 1.5 })).toEqual([
      { pointer: '/maxTotalInteractions', rule: 'type', message: 'must be integer or null' },
    ]);
  });

  it('names an unknown field by JSON pointer and rule', () => {
    expect(validator('create-item')({ label: 'x', colour: 'red' })).toEqual([
      { pointer: '/colour', rule: 'additionalProperties', message: 'is not a known field' },
    ]);
  });

  it('accepts 191 characters and refuses 192, counting code points', () => {
    expect(validator('create-item')({ label: '😀'.repeat(191) })).toEqual([]);
    expect(validator('create-item')({ label: 'a'.repeat(192) })[0]).toMatchObject({
      pointer: '/label',
      rule: 'maxLength',
    });
  });

  it("checks a bulk delete against the form its key names, and says only that form's problems", () => {
    const bulk = validator('bulk-delete');
    expect(bulk({ all: true, x: 1 })).toEqual([
      { pointer: '/x', rule: 'additionalProperties', message: 'is not a known field' },
    ]);
    expect(bulk({ all: 'yes' })).toEqual([{ pointer: '/all', rule: 'const', message: 'must be true' }]);
    expect(bulk({ ids: [] })).toEqual([
      { pointer: '/ids', rule: 'minItems', message: 'must NOT have fewer than 1 items' },
    ]);
    expect(bulk({ ids: ['rcp_a'], all: true })).toEqual([
      { pointer: '', rule: 'oneOf', message: 'must have either ids or all, not both' },
    ]);
    // Neither key: the first form says what is missing, and what else is wrong.
    expect(bulk({ idz: ['rcp_a'] })).toEqual([
      { pointer: '/ids', rule: 'required', message: 'is required' },
      { pointer: '/idz', rule: 'additionalProperties', message: 'is not a known field' },
    ]);
    expect(bulk([])).toEqual([{ pointer: '', rule: 'type', message: 'must be object' }]);
    expect(bulk({ all: true })).toEqual([]);
    expect(bulk({ ids: ['rcp_a'] })).toEqual([]);
  });

  it('coerces query strings but refuses non-integers', () => {
    expect(validator('list-query')({ campaignId: 'c', limit: '200', offset: '0' })).toEqual([]);
    expect(validator('list-query')({ campaignId: 'c', limit: '201' })[0]).toMatchObject({
      pointer: '/limit',
      rule: 'maximum',
    });
    expect(validator('list-query')({ campaignId: 'c', offset: '1.5' })[0]).toMatchObject({
      pointer: '/offset',
      rule: 'type',
    });
    for (const loose of ['1e2', '0x10', ' 5', '5 ', '+5', '']) {
      expect(validator('list-query')({ campaignId: 'c', limit: loose })[0]).toMatchObject({
        pointer: '/limit',
        rule: 'type',
      });
    }
  });
  it('refuses a NUL character or a lone surrogate in any text a client sends to be stored or looked up', () => {
    const message = 'must not contain the NUL character (U+0000) or a lone UTF-16 surrogate';
    const nul = { pointer: '/label', rule: 'format', message };
    expect(validator('create-item')({ label: 'Ada\u0000' })).toEqual([nul]);
    expect(validator('patch')({ label: 'Ada\u0000' })[0]).toEqual(nul);
    // A high or low surrogate without its other half, anywhere in the text: PostgreSQL cannot
    // store it as sent (what String.slice leaves when it cuts an emoji in two).
    for (const lone of ['\ud800', 'bad\udfffx', '😀'.slice(0, 1), '😀'.slice(1), '\udc00\ud800']) {
      expect(validator('create-item')({ label: lone })).toEqual([nul]);
      expect(validator('patch')({ label: lone })[0]).toEqual(nul);
      expect(validator('create-item')({ externalId: lone })).toEqual([
        { pointer: '/externalId', rule: 'format', message },
      ]);
    }
    for (const [name, data, pointer] of [
      ['create-item', { metadata: { k: '\u0000' } }, '/metadata/k'],
      ['create-item', { metadata: { k: 'v\ud800' } }, '/metadata/k'],
      ['create-item', { injectionInstructions: 'Hi\u0000' }, '/injectionInstructions'],
      ['create-item', { disabledMessage: 'Hi\udbff' }, '/disabledMessage'],
      ['patch', { cooldownMessage: '\udfffHi' }, '/cooldownMessage'],
      ['patch', { injectionInstructions: 'Hi\ud83d' }, '/injectionInstructions'],
      ['create-request', { campaignId: 'cmp_\ud800', items: [{}] }, '/campaignId'],
      ['list-query', { campaignId: 'cmp_\u0000' }, '/campaignId'],
      ['list-query', { campaignId: 'cmp_\udfff' }, '/campaignId'],
      ['bulk-delete', { ids: ['rcp_\u0000'] }, '/ids/0'],
      ['bulk-delete', { ids: ['rcp_a', 'rcp_\ud800'] }, '/ids/1'],
    ] as const) {
      // The messages the link page shows are held to page-text, which is storable text too.
      const said = pointer.endsWith('Message') ? PAGE_TEXT_MESSAGE : message;
      expect([name, validator(name)(data)[0]]).toEqual([name, { pointer, rule: 'format', message: said }]);
    }
    // A metadata key is held to its own pattern, which no surrogate fits.
    expect(validator('create-item')({ metadata: { 'k\ud800': 'v' } })).toContainEqual({
      pointer: '/metadata/k\ud800',
      rule: 'propertyNames',
      message: 'is not an allowed key',
    });
    // Every other character is text like any other, a surrogate pair (an emoji) included.
    expect(validator('create-item')({ label: 'Zoë 漢字 😀 \ud83d\ude00 \u0001\u007f\ufffd' })).toEqual([]);
    expect(validator('create-item')({ metadata: { k: '𝄞' }, externalId: '👩‍👩‍👧' })).toEqual([]);
  });

  it('refuses bidi embedding, override and isolate controls in the texts the link page shows', () => {
    // U+202E (RLO) would show "gnp.exe" as "exe.png" to the customer.
    const controls = [
      '\u202A',
      '\u202B',
      '\u202C',
      '\u202D',
      '\u202E',
      '\u2066',
      '\u2067',
      '\u2068',
      '\u2069',
    ];
    for (const field of ['disabledMessage', 'cooldownMessage']) {
      for (const c of controls) {
        const problem = { pointer: `/${field}`, rule: 'format', message: PAGE_TEXT_MESSAGE };
        expect(validator('create-item')({ [field]: `See ${c}gnp.exe` })).toEqual([problem]);
        expect(validator('patch')({ [field]: `See ${c}gnp.exe` })).toEqual([problem]);
      }
      expect(validator('patch')({ [field]: 'Closed\u0000' })[0]).toMatchObject({ rule: 'format' });
      // Right-to-left text, and the marks that only steer the neutral characters beside them, pass.
      expect(validator('patch')({ [field]: 'انتهى العرض. \u200Fשלום\u200E (10%) \u061C' })).toEqual([]);
    }
  });
});
