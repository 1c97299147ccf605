// Original file: outreach/v1/recipients.proto


export interface ListRecipientsRequest {
  'projectId'?: (string);
  'campaignId'?: (string);
  'limit'?: (number);
  'offset'?: (number);
  'active'?: (boolean);
  '_active'?: "active";
}

export interface ListRecipientsRequest__Output {
  'projectId': (string);
  'campaignId': (string);
  'limit': (number);
  'offset': (number);
  'active'?: (boolean);
  '_active'?: "active";
}
