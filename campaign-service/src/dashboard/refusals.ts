import { type AppError, ERROR_CATALOGUE, type ErrorCode } from '@outreach/platform';

/** What must change first, in an operator's words, for each conflict a dashboard action can meet. */
const CONFLICT_HINTS: Readonly<Record<string, string>> = {
  not_editable: 'Only a draft or upcoming campaign can be changed.',
  already_launched: 'There is nothing more to do: open the campaign to see when it runs.',
  end_date_passed: 'Edit the campaign and move its end date into the future, then launch it.',
  not_haltable: 'Only an upcoming or active campaign can be halted.',
  not_metered: 'A fixed-price campaign is uncapped, so it needs no top-off.',
};

/** The catalogue's hints that send API clients to `details`, in words a page can stand by. */
const PAGE_HINTS: Partial<Readonly<Record<ErrorCode, string>>> = {
  invalid_request: 'Go back, correct the values and send the form again.',
  forbidden: 'Your sign-in does not allow this; an operator of the project can.',
  internal: 'Quote the reference below when reporting this.',
};

/**
 * The hint a dashboard page shows with a refusal. Where it is the catalogue's, written for API
 * clients and naming `details`, which no page shows, the page says in words what must change
 * (a conflict by its reason), or nothing; a hint written for the refusal itself is kept.
 */
export function pageHint(err: AppError): string {
  if (err.hint !== ERROR_CATALOGUE[err.code].hint) return err.hint;
  if (err.code === 'conflict') {
    const reason = err.details.reason;
    return (typeof reason === 'string' && CONFLICT_HINTS[reason]) || '';
  }
  return PAGE_HINTS[err.code] ?? (err.hint.includes('details') ? '' : err.hint);
}
