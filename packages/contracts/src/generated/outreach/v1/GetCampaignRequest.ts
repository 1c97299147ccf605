// Original file: outreach/v1/campaigns.proto


export interface GetCampaignRequest {
  'projectId'?: (string);
  'campaignId'?: (string);
}

export interface GetCampaignRequest__Output {
  'projectId': (string);
  'campaignId': (string);
}
