// Original file: outreach/v1/recipients.proto

import type { RecipientLookup as _outreach_v1_RecipientLookup, RecipientLookup__Output as _outreach_v1_RecipientLookup__Output } from '../../outreach/v1/RecipientLookup';

export interface GetRecipientsResponse {
  'results'?: (_outreach_v1_RecipientLookup)[];
}

export interface GetRecipientsResponse__Output {
  'results': (_outreach_v1_RecipientLookup__Output)[];
}
