import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { Allowance as _outreach_v1_Allowance, Allowance__Output as _outreach_v1_Allowance__Output } from './outreach/v1/Allowance';
import type { ApiKeyGrant as _outreach_v1_ApiKeyGrant, ApiKeyGrant__Output as _outreach_v1_ApiKeyGrant__Output } from './outreach/v1/ApiKeyGrant';
import type { Campaign as _outreach_v1_Campaign, Campaign__Output as _outreach_v1_Campaign__Output } from './outreach/v1/Campaign';
import type { CampaignServiceClient as _outreach_v1_CampaignServiceClient, CampaignServiceDefinition as _outreach_v1_CampaignServiceDefinition } from './outreach/v1/CampaignService';
import type { GetAllowanceRequest as _outreach_v1_GetAllowanceRequest, GetAllowanceRequest__Output as _outreach_v1_GetAllowanceRequest__Output } from './outreach/v1/GetAllowanceRequest';
import type { GetCampaignRequest as _outreach_v1_GetCampaignRequest, GetCampaignRequest__Output as _outreach_v1_GetCampaignRequest__Output } from './outreach/v1/GetCampaignRequest';
import type { ListCampaignsRequest as _outreach_v1_ListCampaignsRequest, ListCampaignsRequest__Output as _outreach_v1_ListCampaignsRequest__Output } from './outreach/v1/ListCampaignsRequest';
import type { ListCampaignsResponse as _outreach_v1_ListCampaignsResponse, ListCampaignsResponse__Output as _outreach_v1_ListCampaignsResponse__Output } from './outreach/v1/ListCampaignsResponse';
import type { Timing as _outreach_v1_Timing, Timing__Output as _outreach_v1_Timing__Output } from './outreach/v1/Timing';
import type { VerifyApiKeyRequest as _outreach_v1_VerifyApiKeyRequest, VerifyApiKeyRequest__Output as _outreach_v1_VerifyApiKeyRequest__Output } from './outreach/v1/VerifyApiKeyRequest';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  outreach: {
    v1: {
      Allowance: MessageTypeDefinition<_outreach_v1_Allowance, _outreach_v1_Allowance__Output>
      ApiKeyGrant: MessageTypeDefinition<_outreach_v1_ApiKeyGrant, _outreach_v1_ApiKeyGrant__Output>
      Campaign: MessageTypeDefinition<_outreach_v1_Campaign, _outreach_v1_Campaign__Output>
      CampaignService: SubtypeConstructor<typeof grpc.Client, _outreach_v1_CampaignServiceClient> & { service: _outreach_v1_CampaignServiceDefinition }
      GetAllowanceRequest: MessageTypeDefinition<_outreach_v1_GetAllowanceRequest, _outreach_v1_GetAllowanceRequest__Output>
      GetCampaignRequest: MessageTypeDefinition<_outreach_v1_GetCampaignRequest, _outreach_v1_GetCampaignRequest__Output>
      ListCampaignsRequest: MessageTypeDefinition<_outreach_v1_ListCampaignsRequest, _outreach_v1_ListCampaignsRequest__Output>
      ListCampaignsResponse: MessageTypeDefinition<_outreach_v1_ListCampaignsResponse, _outreach_v1_ListCampaignsResponse__Output>
      Timing: MessageTypeDefinition<_outreach_v1_Timing, _outreach_v1_Timing__Output>
      VerifyApiKeyRequest: MessageTypeDefinition<_outreach_v1_VerifyApiKeyRequest, _outreach_v1_VerifyApiKeyRequest__Output>
    }
  }
}

