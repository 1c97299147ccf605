// Original file: outreach/v1/campaigns.proto


export interface GetAllowanceRequest {
  'projectId'?: (string);
  'campaignId'?: (string);
}

export interface GetAllowanceRequest__Output {
  'projectId': (string);
  'campaignId': (string);
}
