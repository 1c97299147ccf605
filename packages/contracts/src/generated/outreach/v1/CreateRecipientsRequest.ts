// Original file: outreach/v1/recipients.proto


export interface CreateRecipientsRequest {
  'projectId'?: (string);
  'campaignId'?: (string);
  'itemsJson'?: (string)[];
  'wantBodyJson'?: (boolean);
  'idempotencyKey'?: (string);
  'fingerprint'?: (string);
}

export interface CreateRecipientsRequest__Output {
  'projectId': (string);
  'campaignId': (string);
  'itemsJson': (string)[];
  'wantBodyJson': (boolean);
  'idempotencyKey': (string);
  'fingerprint': (string);
}
