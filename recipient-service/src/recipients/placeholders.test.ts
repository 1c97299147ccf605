import { substitutePlaceholders } from './placeholders';

const values = { externalId: 'ann@example.com', label: 'Ann', metadata: { plan: 'gold', Tier: '2' } };

describe('substitutePlaceholders', () => {
  it('resolves every documented form', () => {
    expect(
      substitutePlaceholders(
        '{email}|{external_id}|{label}|{name}|{recipient}|{meta.plan}|{meta.Tier}',
        values,
      ),
    ).toBe('ann@example.com|ann@example.com|Ann|Ann|Ann|gold|2');
  });

  it('is case-insensitive in the placeholder name', () => {
    expect(substitutePlaceholders('{EMAIL} {Name} {ReCiPiEnT} {External_ID} {META.plan}', values)).toBe(
      'ann@example.com Ann Ann ann@example.com gold',
    );
  });

  it('matches a metadata key case-insensitively when exactly one key fits', () => {
    expect(substitutePlaceholders('{meta.PLAN} {meta.tier}', values)).toBe('gold 2');
    const ambiguous = { ...values, metadata: { a: '1', A: '2' } };
    expect(substitutePlaceholders('{meta.a}|{meta.A}|{meta.A_}', ambiguous)).toBe('1|2|');
  });

  it('leaves unknown placeholders and non-placeholders untouched', () => {
    const text = '{unknown} {email.x} {} {meta} {meta.} {e-mail} { email } {{label}}';
    expect(substitutePlaceholders(text, values)).toBe(
      '{unknown} {email.x} {} {meta} {meta.} {e-mail} { email } {Ann}',
    );
  });

  it('turns a missing value into empty text', () => {
    const empty = { externalId: null, label: undefined, metadata: {} };
    expect(substitutePlaceholders('[{email}][{label}][{meta.plan}]', empty)).toBe('[][][]');
  });

  it('does not substitute inside substituted values', () => {
    expect(substitutePlaceholders('{label}', { ...values, label: '{email}' })).toBe('{email}');
  });
});
