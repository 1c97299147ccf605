import { AppError, ERROR_CATALOGUE, type ErrorCode } from '@outreach/platform';
import { pageHint } from './refusals';

describe('pageHint', () => {
  it('never sends an operator to details, which no page shows', () => {
    for (const code of Object.keys(ERROR_CATALOGUE) as ErrorCode[]) {
      expect([code, pageHint(new AppError(code))]).toEqual([code, expect.not.stringContaining('details')]);
    }
  });

  it("says what must change for a conflict's reason, and keeps a hint written for the refusal", () => {
    const conflict = new AppError('conflict', 'No.', { details: { reason: 'end_date_passed' } });
    expect(pageHint(conflict)).toBe(
      'Edit the campaign and move its end date into the future, then launch it.',
    );
    expect(pageHint(new AppError('internal'))).toBe('Quote the reference below when reporting this.');
    expect(pageHint(new AppError('conflict', 'No.', { hint: 'Own words.' }))).toBe('Own words.');
  });
});
