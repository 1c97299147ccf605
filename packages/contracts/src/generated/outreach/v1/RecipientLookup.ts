// Original file: outreach/v1/recipients.proto

import type { Recipient as _outreach_v1_Recipient, Recipient__Output as _outreach_v1_Recipient__Output } from '../../outreach/v1/Recipient';

export interface RecipientLookup {
  'recipient'?: (_outreach_v1_Recipient | null);
  'code'?: (string);
  'error'?: (string);
  'detailsJson'?: (string);
  'hint'?: (string);
  '_code'?: "code";
  '_error'?: "error";
  '_detailsJson'?: "detailsJson";
  '_hint'?: "hint";
}

export interface RecipientLookup__Output {
  'recipient': (_outreach_v1_Recipient__Output | null);
  'code'?: (string);
  'error'?: (string);
  'detailsJson'?: (string);
  'hint'?: (string);
  '_code'?: "code";
  '_error'?: "error";
  '_detailsJson'?: "detailsJson";
  '_hint'?: "hint";
}
