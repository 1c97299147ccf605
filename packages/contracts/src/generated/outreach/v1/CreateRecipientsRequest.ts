// Original file: outreach/v1/recipients.proto


export interface CreateRecipientsRequest {
  'projectId'?: (string);
  'campaignId'?: (string);
  'itemsJson'?: (string)[];
  'wantBodyJson'?: (boolean);
}

export interface CreateRecipientsRequest__Output {
  'projectId': (string);
  'campaignId': (string);
  'itemsJson': (string)[];
  'wantBodyJson': (boolean);
}
