// Original file: outreach/v1/recipients.proto

import type { GetRecipientRequest as _outreach_v1_GetRecipientRequest, GetRecipientRequest__Output as _outreach_v1_GetRecipientRequest__Output } from '../../outreach/v1/GetRecipientRequest';

export interface GetRecipientsRequest {
  'lookups'?: (_outreach_v1_GetRecipientRequest)[];
}

export interface GetRecipientsRequest__Output {
  'lookups': (_outreach_v1_GetRecipientRequest__Output)[];
}
