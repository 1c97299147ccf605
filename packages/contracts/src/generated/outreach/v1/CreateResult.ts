// Original file: outreach/v1/recipients.proto

import type { Recipient as _outreach_v1_Recipient, Recipient__Output as _outreach_v1_Recipient__Output } from '../../outreach/v1/Recipient';

export interface CreateResult {
  'status'?: (string);
  'index'?: (number);
  'externalId'?: (string);
  'id'?: (string);
  'recipient'?: (_outreach_v1_Recipient | null);
  'code'?: (string);
  'error'?: (string);
  'detailsJson'?: (string);
  '_externalId'?: "externalId";
  '_id'?: "id";
  '_code'?: "code";
  '_error'?: "error";
  '_detailsJson'?: "detailsJson";
}

export interface CreateResult__Output {
  'status': (string);
  'index': (number);
  'externalId'?: (string);
  'id'?: (string);
  'recipient': (_outreach_v1_Recipient__Output | null);
  'code'?: (string);
  'error'?: (string);
  'detailsJson'?: (string);
  '_externalId'?: "externalId";
  '_id'?: "id";
  '_code'?: "code";
  '_error'?: "error";
  '_detailsJson'?: "detailsJson";
}
