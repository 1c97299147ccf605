// Original file: outreach/v1/recipients.proto


export interface CountRecipientsRequest {
  'projectId'?: (string);
  'campaignIds'?: (string)[];
}

export interface CountRecipientsRequest__Output {
  'projectId': (string);
  'campaignIds': (string)[];
}
