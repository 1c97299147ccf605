import { editDetail, sameInstant } from './edit-detail';

describe('editDetail', () => {
  it('names the changed fields in order, with the old value where asked, and nothing for no change', () => {
    expect(
      editDetail([
        { words: 'name', before: 'Spring', after: 'Summer', showBefore: true },
        { words: 'device', before: 'dev_a', after: 'dev_a' },
        {
          words: 'end date',
          before: '2026-06-01T00:00:00.000Z',
          after: '2026-07-01T00:00:00Z',
          same: sameInstant,
        },
        { words: 'recipient cap', before: null, after: 100 },
      ]),
    ).toBe('name was “Spring”; end date; recipient cap');
    expect(
      editDetail([
        {
          words: 'start date',
          before: '2026-06-01T00:00:00.000Z',
          after: '2026-06-01T00:00:00Z',
          same: sameInstant,
        },
        // Stored JSON comes back with its keys in another order: the same styling.
        {
          words: 'styling',
          before: { title: 'Acme', primaryColor: '#000000' },
          after: { primaryColor: '#000000', title: 'Acme' },
        },
      ]),
    ).toBeNull();
  });
});
