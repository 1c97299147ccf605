// Original file: outreach/v1/recipients.proto

import type { CreateResult as _outreach_v1_CreateResult, CreateResult__Output as _outreach_v1_CreateResult__Output } from '../../outreach/v1/CreateResult';

export interface CreateRecipientsResponse {
  'created'?: (number);
  'failed'?: (number);
  'total'?: (number);
  'results'?: (_outreach_v1_CreateResult)[];
  'bodyJson'?: (string);
  'replayed'?: (boolean);
}

export interface CreateRecipientsResponse__Output {
  'created': (number);
  'failed': (number);
  'total': (number);
  'results': (_outreach_v1_CreateResult__Output)[];
  'bodyJson': (string);
  'replayed': (boolean);
}
