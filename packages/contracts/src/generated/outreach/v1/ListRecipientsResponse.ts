// Original file: outreach/v1/recipients.proto

import type { Recipient as _outreach_v1_Recipient, Recipient__Output as _outreach_v1_Recipient__Output } from '../../outreach/v1/Recipient';

export interface ListRecipientsResponse {
  'total'?: (number);
  'recipients'?: (_outreach_v1_Recipient)[];
  'matched'?: (number);
  '_matched'?: "matched";
}

export interface ListRecipientsResponse__Output {
  'total': (number);
  'recipients': (_outreach_v1_Recipient__Output)[];
  'matched'?: (number);
  '_matched'?: "matched";
}
