// Original file: outreach/v1/recipients.proto

import type { Recipient as _outreach_v1_Recipient, Recipient__Output as _outreach_v1_Recipient__Output } from '../../outreach/v1/Recipient';

export interface LinkRecipient {
  'recipient'?: (_outreach_v1_Recipient | null);
  'token'?: (string);
}

export interface LinkRecipient__Output {
  'recipient': (_outreach_v1_Recipient__Output | null);
  'token': (string);
}
