// Original file: outreach/v1/campaigns.proto

import type { Campaign as _outreach_v1_Campaign, Campaign__Output as _outreach_v1_Campaign__Output } from '../../outreach/v1/Campaign';

export interface ListCampaignsResponse {
  'campaigns'?: (_outreach_v1_Campaign)[];
}

export interface ListCampaignsResponse__Output {
  'campaigns': (_outreach_v1_Campaign__Output)[];
}
