// Original file: outreach/v1/recipients.proto


export interface ListRecipientsRequest {
  'projectId'?: (string);
  'campaignId'?: (string);
  'limit'?: (number);
  'offset'?: (number);
  'active'?: (boolean);
  'search'?: (string);
  'countMatches'?: (boolean);
  '_active'?: "active";
  '_search'?: "search";
}

export interface ListRecipientsRequest__Output {
  'projectId': (string);
  'campaignId': (string);
  'limit': (number);
  'offset': (number);
  'active'?: (boolean);
  'search'?: (string);
  'countMatches': (boolean);
  '_active'?: "active";
  '_search'?: "search";
}
