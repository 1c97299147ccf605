// Original file: outreach/v1/campaigns.proto


export interface ListCampaignsRequest {
  'projectId'?: (string);
  'state'?: (string);
  '_state'?: "state";
}

export interface ListCampaignsRequest__Output {
  'projectId': (string);
  'state'?: (string);
  '_state'?: "state";
}
