import { type AppError, ERROR_CATALOGUE } from '@outreach/platform';

/** What must change first, in an operator's words, for each conflict a dashboard action can meet. */
const CONFLICT_HINTS: Readonly<Record<string, string>> = {
  not_editable: 'Only a draft or upcoming campaign can be changed.',
  already_launched: 'There is nothing more to do: open the campaign to see when it runs.',
  end_date_passed: 'Edit the campaign and move its end date into the future, then launch it.',
  not_haltable: 'Only an upcoming or active campaign can be halted.',
  not_metered: 'A fixed-price campaign is uncapped, so it needs no top-off.',
};

/**
 * The hint a dashboard page shows with a refusal. A conflict's catalogue hint sends API clients to
 * `details.reason`, which no page shows: the page says in words what must change, or nothing.
 */
export function pageHint(err: AppError): string {
  if (err.code !== 'conflict' || err.hint !== ERROR_CATALOGUE.conflict.hint) return err.hint;
  const reason = err.details.reason;
  return (typeof reason === 'string' && CONFLICT_HINTS[reason]) || '';
}
