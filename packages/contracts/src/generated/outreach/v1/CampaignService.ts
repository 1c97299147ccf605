// Original file: outreach/v1/campaigns.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { Allowance as _outreach_v1_Allowance, Allowance__Output as _outreach_v1_Allowance__Output } from '../../outreach/v1/Allowance';
import type { ApiKeyGrant as _outreach_v1_ApiKeyGrant, ApiKeyGrant__Output as _outreach_v1_ApiKeyGrant__Output } from '../../outreach/v1/ApiKeyGrant';
import type { Campaign as _outreach_v1_Campaign, Campaign__Output as _outreach_v1_Campaign__Output } from '../../outreach/v1/Campaign';
import type { GetAllowanceRequest as _outreach_v1_GetAllowanceRequest, GetAllowanceRequest__Output as _outreach_v1_GetAllowanceRequest__Output } from '../../outreach/v1/GetAllowanceRequest';
import type { GetCampaignRequest as _outreach_v1_GetCampaignRequest, GetCampaignRequest__Output as _outreach_v1_GetCampaignRequest__Output } from '../../outreach/v1/GetCampaignRequest';
import type { ListCampaignsRequest as _outreach_v1_ListCampaignsRequest, ListCampaignsRequest__Output as _outreach_v1_ListCampaignsRequest__Output } from '../../outreach/v1/ListCampaignsRequest';
import type { ListCampaignsResponse as _outreach_v1_ListCampaignsResponse, ListCampaignsResponse__Output as _outreach_v1_ListCampaignsResponse__Output } from '../../outreach/v1/ListCampaignsResponse';
import type { VerifyApiKeyRequest as _outreach_v1_VerifyApiKeyRequest, VerifyApiKeyRequest__Output as _outreach_v1_VerifyApiKeyRequest__Output } from '../../outreach/v1/VerifyApiKeyRequest';

export interface CampaignServiceClient extends grpc.Client {
  GetAllowance(argument: _outreach_v1_GetAllowanceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_Allowance__Output>): grpc.ClientUnaryCall;
  GetAllowance(argument: _outreach_v1_GetAllowanceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_Allowance__Output>): grpc.ClientUnaryCall;
  GetAllowance(argument: _outreach_v1_GetAllowanceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_Allowance__Output>): grpc.ClientUnaryCall;
  GetAllowance(argument: _outreach_v1_GetAllowanceRequest, callback: grpc.requestCallback<_outreach_v1_Allowance__Output>): grpc.ClientUnaryCall;
  getAllowance(argument: _outreach_v1_GetAllowanceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_Allowance__Output>): grpc.ClientUnaryCall;
  getAllowance(argument: _outreach_v1_GetAllowanceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_Allowance__Output>): grpc.ClientUnaryCall;
  getAllowance(argument: _outreach_v1_GetAllowanceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_Allowance__Output>): grpc.ClientUnaryCall;
  getAllowance(argument: _outreach_v1_GetAllowanceRequest, callback: grpc.requestCallback<_outreach_v1_Allowance__Output>): grpc.ClientUnaryCall;
  
  GetCampaign(argument: _outreach_v1_GetCampaignRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_Campaign__Output>): grpc.ClientUnaryCall;
  GetCampaign(argument: _outreach_v1_GetCampaignRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_Campaign__Output>): grpc.ClientUnaryCall;
  GetCampaign(argument: _outreach_v1_GetCampaignRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_Campaign__Output>): grpc.ClientUnaryCall;
  GetCampaign(argument: _outreach_v1_GetCampaignRequest, callback: grpc.requestCallback<_outreach_v1_Campaign__Output>): grpc.ClientUnaryCall;
  getCampaign(argument: _outreach_v1_GetCampaignRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_Campaign__Output>): grpc.ClientUnaryCall;
  getCampaign(argument: _outreach_v1_GetCampaignRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_Campaign__Output>): grpc.ClientUnaryCall;
  getCampaign(argument: _outreach_v1_GetCampaignRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_Campaign__Output>): grpc.ClientUnaryCall;
  getCampaign(argument: _outreach_v1_GetCampaignRequest, callback: grpc.requestCallback<_outreach_v1_Campaign__Output>): grpc.ClientUnaryCall;
  
  ListCampaigns(argument: _outreach_v1_ListCampaignsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_ListCampaignsResponse__Output>): grpc.ClientUnaryCall;
  ListCampaigns(argument: _outreach_v1_ListCampaignsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_ListCampaignsResponse__Output>): grpc.ClientUnaryCall;
  ListCampaigns(argument: _outreach_v1_ListCampaignsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_ListCampaignsResponse__Output>): grpc.ClientUnaryCall;
  ListCampaigns(argument: _outreach_v1_ListCampaignsRequest, callback: grpc.requestCallback<_outreach_v1_ListCampaignsResponse__Output>): grpc.ClientUnaryCall;
  listCampaigns(argument: _outreach_v1_ListCampaignsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_ListCampaignsResponse__Output>): grpc.ClientUnaryCall;
  listCampaigns(argument: _outreach_v1_ListCampaignsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_ListCampaignsResponse__Output>): grpc.ClientUnaryCall;
  listCampaigns(argument: _outreach_v1_ListCampaignsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_ListCampaignsResponse__Output>): grpc.ClientUnaryCall;
  listCampaigns(argument: _outreach_v1_ListCampaignsRequest, callback: grpc.requestCallback<_outreach_v1_ListCampaignsResponse__Output>): grpc.ClientUnaryCall;
  
  VerifyApiKey(argument: _outreach_v1_VerifyApiKeyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_ApiKeyGrant__Output>): grpc.ClientUnaryCall;
  VerifyApiKey(argument: _outreach_v1_VerifyApiKeyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_ApiKeyGrant__Output>): grpc.ClientUnaryCall;
  VerifyApiKey(argument: _outreach_v1_VerifyApiKeyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_ApiKeyGrant__Output>): grpc.ClientUnaryCall;
  VerifyApiKey(argument: _outreach_v1_VerifyApiKeyRequest, callback: grpc.requestCallback<_outreach_v1_ApiKeyGrant__Output>): grpc.ClientUnaryCall;
  verifyApiKey(argument: _outreach_v1_VerifyApiKeyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_ApiKeyGrant__Output>): grpc.ClientUnaryCall;
  verifyApiKey(argument: _outreach_v1_VerifyApiKeyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_ApiKeyGrant__Output>): grpc.ClientUnaryCall;
  verifyApiKey(argument: _outreach_v1_VerifyApiKeyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_ApiKeyGrant__Output>): grpc.ClientUnaryCall;
  verifyApiKey(argument: _outreach_v1_VerifyApiKeyRequest, callback: grpc.requestCallback<_outreach_v1_ApiKeyGrant__Output>): grpc.ClientUnaryCall;
  
}

export interface CampaignServiceHandlers extends grpc.UntypedServiceImplementation {
  GetAllowance: grpc.handleUnaryCall<_outreach_v1_GetAllowanceRequest__Output, _outreach_v1_Allowance>;
  
  GetCampaign: grpc.handleUnaryCall<_outreach_v1_GetCampaignRequest__Output, _outreach_v1_Campaign>;
  
  ListCampaigns: grpc.handleUnaryCall<_outreach_v1_ListCampaignsRequest__Output, _outreach_v1_ListCampaignsResponse>;
  
  VerifyApiKey: grpc.handleUnaryCall<_outreach_v1_VerifyApiKeyRequest__Output, _outreach_v1_ApiKeyGrant>;
  
}

export interface CampaignServiceDefinition extends grpc.ServiceDefinition {
  GetAllowance: MethodDefinition<_outreach_v1_GetAllowanceRequest, _outreach_v1_Allowance, _outreach_v1_GetAllowanceRequest__Output, _outreach_v1_Allowance__Output>
  GetCampaign: MethodDefinition<_outreach_v1_GetCampaignRequest, _outreach_v1_Campaign, _outreach_v1_GetCampaignRequest__Output, _outreach_v1_Campaign__Output>
  ListCampaigns: MethodDefinition<_outreach_v1_ListCampaignsRequest, _outreach_v1_ListCampaignsResponse, _outreach_v1_ListCampaignsRequest__Output, _outreach_v1_ListCampaignsResponse__Output>
  VerifyApiKey: MethodDefinition<_outreach_v1_VerifyApiKeyRequest, _outreach_v1_ApiKeyGrant, _outreach_v1_VerifyApiKeyRequest__Output, _outreach_v1_ApiKeyGrant__Output>
}
