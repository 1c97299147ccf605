// Original file: outreach/v1/recipients.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { BulkDeleteRecipientsRequest as _outreach_v1_BulkDeleteRecipientsRequest, BulkDeleteRecipientsRequest__Output as _outreach_v1_BulkDeleteRecipientsRequest__Output } from '../../outreach/v1/BulkDeleteRecipientsRequest';
import type { BulkDeleteRecipientsResponse as _outreach_v1_BulkDeleteRecipientsResponse, BulkDeleteRecipientsResponse__Output as _outreach_v1_BulkDeleteRecipientsResponse__Output } from '../../outreach/v1/BulkDeleteRecipientsResponse';
import type { CountRecipientsRequest as _outreach_v1_CountRecipientsRequest, CountRecipientsRequest__Output as _outreach_v1_CountRecipientsRequest__Output } from '../../outreach/v1/CountRecipientsRequest';
import type { CountRecipientsResponse as _outreach_v1_CountRecipientsResponse, CountRecipientsResponse__Output as _outreach_v1_CountRecipientsResponse__Output } from '../../outreach/v1/CountRecipientsResponse';
import type { CreateRecipientsRequest as _outreach_v1_CreateRecipientsRequest, CreateRecipientsRequest__Output as _outreach_v1_CreateRecipientsRequest__Output } from '../../outreach/v1/CreateRecipientsRequest';
import type { CreateRecipientsResponse as _outreach_v1_CreateRecipientsResponse, CreateRecipientsResponse__Output as _outreach_v1_CreateRecipientsResponse__Output } from '../../outreach/v1/CreateRecipientsResponse';
import type { DeleteRecipientRequest as _outreach_v1_DeleteRecipientRequest, DeleteRecipientRequest__Output as _outreach_v1_DeleteRecipientRequest__Output } from '../../outreach/v1/DeleteRecipientRequest';
import type { DeleteRecipientResponse as _outreach_v1_DeleteRecipientResponse, DeleteRecipientResponse__Output as _outreach_v1_DeleteRecipientResponse__Output } from '../../outreach/v1/DeleteRecipientResponse';
import type { GetRecipientRequest as _outreach_v1_GetRecipientRequest, GetRecipientRequest__Output as _outreach_v1_GetRecipientRequest__Output } from '../../outreach/v1/GetRecipientRequest';
import type { GetRecipientsRequest as _outreach_v1_GetRecipientsRequest, GetRecipientsRequest__Output as _outreach_v1_GetRecipientsRequest__Output } from '../../outreach/v1/GetRecipientsRequest';
import type { GetRecipientsResponse as _outreach_v1_GetRecipientsResponse, GetRecipientsResponse__Output as _outreach_v1_GetRecipientsResponse__Output } from '../../outreach/v1/GetRecipientsResponse';
import type { LinkRecipient as _outreach_v1_LinkRecipient, LinkRecipient__Output as _outreach_v1_LinkRecipient__Output } from '../../outreach/v1/LinkRecipient';
import type { ListRecipientsRequest as _outreach_v1_ListRecipientsRequest, ListRecipientsRequest__Output as _outreach_v1_ListRecipientsRequest__Output } from '../../outreach/v1/ListRecipientsRequest';
import type { ListRecipientsResponse as _outreach_v1_ListRecipientsResponse, ListRecipientsResponse__Output as _outreach_v1_ListRecipientsResponse__Output } from '../../outreach/v1/ListRecipientsResponse';
import type { Recipient as _outreach_v1_Recipient, Recipient__Output as _outreach_v1_Recipient__Output } from '../../outreach/v1/Recipient';
import type { ResolveLinkRequest as _outreach_v1_ResolveLinkRequest, ResolveLinkRequest__Output as _outreach_v1_ResolveLinkRequest__Output } from '../../outreach/v1/ResolveLinkRequest';
import type { ResolveLinksRequest as _outreach_v1_ResolveLinksRequest, ResolveLinksRequest__Output as _outreach_v1_ResolveLinksRequest__Output } from '../../outreach/v1/ResolveLinksRequest';
import type { ResolveLinksResponse as _outreach_v1_ResolveLinksResponse, ResolveLinksResponse__Output as _outreach_v1_ResolveLinksResponse__Output } from '../../outreach/v1/ResolveLinksResponse';
import type { UpdateRecipientRequest as _outreach_v1_UpdateRecipientRequest, UpdateRecipientRequest__Output as _outreach_v1_UpdateRecipientRequest__Output } from '../../outreach/v1/UpdateRecipientRequest';

export interface RecipientServiceClient extends grpc.Client {
  BulkDeleteRecipients(argument: _outreach_v1_BulkDeleteRecipientsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_BulkDeleteRecipientsResponse__Output>): grpc.ClientUnaryCall;
  BulkDeleteRecipients(argument: _outreach_v1_BulkDeleteRecipientsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_BulkDeleteRecipientsResponse__Output>): grpc.ClientUnaryCall;
  BulkDeleteRecipients(argument: _outreach_v1_BulkDeleteRecipientsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_BulkDeleteRecipientsResponse__Output>): grpc.ClientUnaryCall;
  BulkDeleteRecipients(argument: _outreach_v1_BulkDeleteRecipientsRequest, callback: grpc.requestCallback<_outreach_v1_BulkDeleteRecipientsResponse__Output>): grpc.ClientUnaryCall;
  bulkDeleteRecipients(argument: _outreach_v1_BulkDeleteRecipientsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_BulkDeleteRecipientsResponse__Output>): grpc.ClientUnaryCall;
  bulkDeleteRecipients(argument: _outreach_v1_BulkDeleteRecipientsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_BulkDeleteRecipientsResponse__Output>): grpc.ClientUnaryCall;
  bulkDeleteRecipients(argument: _outreach_v1_BulkDeleteRecipientsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_BulkDeleteRecipientsResponse__Output>): grpc.ClientUnaryCall;
  bulkDeleteRecipients(argument: _outreach_v1_BulkDeleteRecipientsRequest, callback: grpc.requestCallback<_outreach_v1_BulkDeleteRecipientsResponse__Output>): grpc.ClientUnaryCall;
  
  CountRecipients(argument: _outreach_v1_CountRecipientsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_CountRecipientsResponse__Output>): grpc.ClientUnaryCall;
  CountRecipients(argument: _outreach_v1_CountRecipientsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_CountRecipientsResponse__Output>): grpc.ClientUnaryCall;
  CountRecipients(argument: _outreach_v1_CountRecipientsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_CountRecipientsResponse__Output>): grpc.ClientUnaryCall;
  CountRecipients(argument: _outreach_v1_CountRecipientsRequest, callback: grpc.requestCallback<_outreach_v1_CountRecipientsResponse__Output>): grpc.ClientUnaryCall;
  countRecipients(argument: _outreach_v1_CountRecipientsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_CountRecipientsResponse__Output>): grpc.ClientUnaryCall;
  countRecipients(argument: _outreach_v1_CountRecipientsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_CountRecipientsResponse__Output>): grpc.ClientUnaryCall;
  countRecipients(argument: _outreach_v1_CountRecipientsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_CountRecipientsResponse__Output>): grpc.ClientUnaryCall;
  countRecipients(argument: _outreach_v1_CountRecipientsRequest, callback: grpc.requestCallback<_outreach_v1_CountRecipientsResponse__Output>): grpc.ClientUnaryCall;
  
  CreateRecipients(argument: _outreach_v1_CreateRecipientsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_CreateRecipientsResponse__Output>): grpc.ClientUnaryCall;
  CreateRecipients(argument: _outreach_v1_CreateRecipientsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_CreateRecipientsResponse__Output>): grpc.ClientUnaryCall;
  CreateRecipients(argument: _outreach_v1_CreateRecipientsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_CreateRecipientsResponse__Output>): grpc.ClientUnaryCall;
  CreateRecipients(argument: _outreach_v1_CreateRecipientsRequest, callback: grpc.requestCallback<_outreach_v1_CreateRecipientsResponse__Output>): grpc.ClientUnaryCall;
  createRecipients(argument: _outreach_v1_CreateRecipientsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_CreateRecipientsResponse__Output>): grpc.ClientUnaryCall;
  createRecipients(argument: _outreach_v1_CreateRecipientsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_CreateRecipientsResponse__Output>): grpc.ClientUnaryCall;
  createRecipients(argument: _outreach_v1_CreateRecipientsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_CreateRecipientsResponse__Output>): grpc.ClientUnaryCall;
  createRecipients(argument: _outreach_v1_CreateRecipientsRequest, callback: grpc.requestCallback<_outreach_v1_CreateRecipientsResponse__Output>): grpc.ClientUnaryCall;
  
  DeleteRecipient(argument: _outreach_v1_DeleteRecipientRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_DeleteRecipientResponse__Output>): grpc.ClientUnaryCall;
  DeleteRecipient(argument: _outreach_v1_DeleteRecipientRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_DeleteRecipientResponse__Output>): grpc.ClientUnaryCall;
  DeleteRecipient(argument: _outreach_v1_DeleteRecipientRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_DeleteRecipientResponse__Output>): grpc.ClientUnaryCall;
  DeleteRecipient(argument: _outreach_v1_DeleteRecipientRequest, callback: grpc.requestCallback<_outreach_v1_DeleteRecipientResponse__Output>): grpc.ClientUnaryCall;
  deleteRecipient(argument: _outreach_v1_DeleteRecipientRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_DeleteRecipientResponse__Output>): grpc.ClientUnaryCall;
  deleteRecipient(argument: _outreach_v1_DeleteRecipientRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_DeleteRecipientResponse__Output>): grpc.ClientUnaryCall;
  deleteRecipient(argument: _outreach_v1_DeleteRecipientRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_DeleteRecipientResponse__Output>): grpc.ClientUnaryCall;
  deleteRecipient(argument: _outreach_v1_DeleteRecipientRequest, callback: grpc.requestCallback<_outreach_v1_DeleteRecipientResponse__Output>): grpc.ClientUnaryCall;
  
  GetRecipient(argument: _outreach_v1_GetRecipientRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_Recipient__Output>): grpc.ClientUnaryCall;
  GetRecipient(argument: _outreach_v1_GetRecipientRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_Recipient__Output>): grpc.ClientUnaryCall;
  GetRecipient(argument: _outreach_v1_GetRecipientRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_Recipient__Output>): grpc.ClientUnaryCall;
  GetRecipient(argument: _outreach_v1_GetRecipientRequest, callback: grpc.requestCallback<_outreach_v1_Recipient__Output>): grpc.ClientUnaryCall;
  getRecipient(argument: _outreach_v1_GetRecipientRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_Recipient__Output>): grpc.ClientUnaryCall;
  getRecipient(argument: _outreach_v1_GetRecipientRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_Recipient__Output>): grpc.ClientUnaryCall;
  getRecipient(argument: _outreach_v1_GetRecipientRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_Recipient__Output>): grpc.ClientUnaryCall;
  getRecipient(argument: _outreach_v1_GetRecipientRequest, callback: grpc.requestCallback<_outreach_v1_Recipient__Output>): grpc.ClientUnaryCall;
  
  GetRecipients(argument: _outreach_v1_GetRecipientsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_GetRecipientsResponse__Output>): grpc.ClientUnaryCall;
  GetRecipients(argument: _outreach_v1_GetRecipientsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_GetRecipientsResponse__Output>): grpc.ClientUnaryCall;
  GetRecipients(argument: _outreach_v1_GetRecipientsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_GetRecipientsResponse__Output>): grpc.ClientUnaryCall;
  GetRecipients(argument: _outreach_v1_GetRecipientsRequest, callback: grpc.requestCallback<_outreach_v1_GetRecipientsResponse__Output>): grpc.ClientUnaryCall;
  getRecipients(argument: _outreach_v1_GetRecipientsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_GetRecipientsResponse__Output>): grpc.ClientUnaryCall;
  getRecipients(argument: _outreach_v1_GetRecipientsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_GetRecipientsResponse__Output>): grpc.ClientUnaryCall;
  getRecipients(argument: _outreach_v1_GetRecipientsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_GetRecipientsResponse__Output>): grpc.ClientUnaryCall;
  getRecipients(argument: _outreach_v1_GetRecipientsRequest, callback: grpc.requestCallback<_outreach_v1_GetRecipientsResponse__Output>): grpc.ClientUnaryCall;
  
  ListRecipients(argument: _outreach_v1_ListRecipientsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_ListRecipientsResponse__Output>): grpc.ClientUnaryCall;
  ListRecipients(argument: _outreach_v1_ListRecipientsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_ListRecipientsResponse__Output>): grpc.ClientUnaryCall;
  ListRecipients(argument: _outreach_v1_ListRecipientsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_ListRecipientsResponse__Output>): grpc.ClientUnaryCall;
  ListRecipients(argument: _outreach_v1_ListRecipientsRequest, callback: grpc.requestCallback<_outreach_v1_ListRecipientsResponse__Output>): grpc.ClientUnaryCall;
  listRecipients(argument: _outreach_v1_ListRecipientsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_ListRecipientsResponse__Output>): grpc.ClientUnaryCall;
  listRecipients(argument: _outreach_v1_ListRecipientsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_ListRecipientsResponse__Output>): grpc.ClientUnaryCall;
  listRecipients(argument: _outreach_v1_ListRecipientsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_ListRecipientsResponse__Output>): grpc.ClientUnaryCall;
  listRecipients(argument: _outreach_v1_ListRecipientsRequest, callback: grpc.requestCallback<_outreach_v1_ListRecipientsResponse__Output>): grpc.ClientUnaryCall;
  
  ResolveLink(argument: _outreach_v1_ResolveLinkRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_LinkRecipient__Output>): grpc.ClientUnaryCall;
  ResolveLink(argument: _outreach_v1_ResolveLinkRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_LinkRecipient__Output>): grpc.ClientUnaryCall;
  ResolveLink(argument: _outreach_v1_ResolveLinkRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_LinkRecipient__Output>): grpc.ClientUnaryCall;
  ResolveLink(argument: _outreach_v1_ResolveLinkRequest, callback: grpc.requestCallback<_outreach_v1_LinkRecipient__Output>): grpc.ClientUnaryCall;
  resolveLink(argument: _outreach_v1_ResolveLinkRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_LinkRecipient__Output>): grpc.ClientUnaryCall;
  resolveLink(argument: _outreach_v1_ResolveLinkRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_LinkRecipient__Output>): grpc.ClientUnaryCall;
  resolveLink(argument: _outreach_v1_ResolveLinkRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_LinkRecipient__Output>): grpc.ClientUnaryCall;
  resolveLink(argument: _outreach_v1_ResolveLinkRequest, callback: grpc.requestCallback<_outreach_v1_LinkRecipient__Output>): grpc.ClientUnaryCall;
  
  ResolveLinks(argument: _outreach_v1_ResolveLinksRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_ResolveLinksResponse__Output>): grpc.ClientUnaryCall;
  ResolveLinks(argument: _outreach_v1_ResolveLinksRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_ResolveLinksResponse__Output>): grpc.ClientUnaryCall;
  ResolveLinks(argument: _outreach_v1_ResolveLinksRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_ResolveLinksResponse__Output>): grpc.ClientUnaryCall;
  ResolveLinks(argument: _outreach_v1_ResolveLinksRequest, callback: grpc.requestCallback<_outreach_v1_ResolveLinksResponse__Output>): grpc.ClientUnaryCall;
  resolveLinks(argument: _outreach_v1_ResolveLinksRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_ResolveLinksResponse__Output>): grpc.ClientUnaryCall;
  resolveLinks(argument: _outreach_v1_ResolveLinksRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_ResolveLinksResponse__Output>): grpc.ClientUnaryCall;
  resolveLinks(argument: _outreach_v1_ResolveLinksRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_ResolveLinksResponse__Output>): grpc.ClientUnaryCall;
  resolveLinks(argument: _outreach_v1_ResolveLinksRequest, callback: grpc.requestCallback<_outreach_v1_ResolveLinksResponse__Output>): grpc.ClientUnaryCall;
  
  UpdateRecipient(argument: _outreach_v1_UpdateRecipientRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_Recipient__Output>): grpc.ClientUnaryCall;
  UpdateRecipient(argument: _outreach_v1_UpdateRecipientRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_Recipient__Output>): grpc.ClientUnaryCall;
  UpdateRecipient(argument: _outreach_v1_UpdateRecipientRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_Recipient__Output>): grpc.ClientUnaryCall;
  UpdateRecipient(argument: _outreach_v1_UpdateRecipientRequest, callback: grpc.requestCallback<_outreach_v1_Recipient__Output>): grpc.ClientUnaryCall;
  updateRecipient(argument: _outreach_v1_UpdateRecipientRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_Recipient__Output>): grpc.ClientUnaryCall;
  updateRecipient(argument: _outreach_v1_UpdateRecipientRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_outreach_v1_Recipient__Output>): grpc.ClientUnaryCall;
  updateRecipient(argument: _outreach_v1_UpdateRecipientRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_outreach_v1_Recipient__Output>): grpc.ClientUnaryCall;
  updateRecipient(argument: _outreach_v1_UpdateRecipientRequest, callback: grpc.requestCallback<_outreach_v1_Recipient__Output>): grpc.ClientUnaryCall;
  
}

export interface RecipientServiceHandlers extends grpc.UntypedServiceImplementation {
  BulkDeleteRecipients: grpc.handleUnaryCall<_outreach_v1_BulkDeleteRecipientsRequest__Output, _outreach_v1_BulkDeleteRecipientsResponse>;
  
  CountRecipients: grpc.handleUnaryCall<_outreach_v1_CountRecipientsRequest__Output, _outreach_v1_CountRecipientsResponse>;
  
  CreateRecipients: grpc.handleUnaryCall<_outreach_v1_CreateRecipientsRequest__Output, _outreach_v1_CreateRecipientsResponse>;
  
  DeleteRecipient: grpc.handleUnaryCall<_outreach_v1_DeleteRecipientRequest__Output, _outreach_v1_DeleteRecipientResponse>;
  
  GetRecipient: grpc.handleUnaryCall<_outreach_v1_GetRecipientRequest__Output, _outreach_v1_Recipient>;
  
  GetRecipients: grpc.handleUnaryCall<_outreach_v1_GetRecipientsRequest__Output, _outreach_v1_GetRecipientsResponse>;
  
  ListRecipients: grpc.handleUnaryCall<_outreach_v1_ListRecipientsRequest__Output, _outreach_v1_ListRecipientsResponse>;
  
  ResolveLink: grpc.handleUnaryCall<_outreach_v1_ResolveLinkRequest__Output, _outreach_v1_LinkRecipient>;
  
  ResolveLinks: grpc.handleUnaryCall<_outreach_v1_ResolveLinksRequest__Output, _outreach_v1_ResolveLinksResponse>;
  
  UpdateRecipient: grpc.handleUnaryCall<_outreach_v1_UpdateRecipientRequest__Output, _outreach_v1_Recipient>;
  
}

export interface RecipientServiceDefinition extends grpc.ServiceDefinition {
  BulkDeleteRecipients: MethodDefinition<_outreach_v1_BulkDeleteRecipientsRequest, _outreach_v1_BulkDeleteRecipientsResponse, _outreach_v1_BulkDeleteRecipientsRequest__Output, _outreach_v1_BulkDeleteRecipientsResponse__Output>
  CountRecipients: MethodDefinition<_outreach_v1_CountRecipientsRequest, _outreach_v1_CountRecipientsResponse, _outreach_v1_CountRecipientsRequest__Output, _outreach_v1_CountRecipientsResponse__Output>
  CreateRecipients: MethodDefinition<_outreach_v1_CreateRecipientsRequest, _outreach_v1_CreateRecipientsResponse, _outreach_v1_CreateRecipientsRequest__Output, _outreach_v1_CreateRecipientsResponse__Output>
  DeleteRecipient: MethodDefinition<_outreach_v1_DeleteRecipientRequest, _outreach_v1_DeleteRecipientResponse, _outreach_v1_DeleteRecipientRequest__Output, _outreach_v1_DeleteRecipientResponse__Output>
  GetRecipient: MethodDefinition<_outreach_v1_GetRecipientRequest, _outreach_v1_Recipient, _outreach_v1_GetRecipientRequest__Output, _outreach_v1_Recipient__Output>
  GetRecipients: MethodDefinition<_outreach_v1_GetRecipientsRequest, _outreach_v1_GetRecipientsResponse, _outreach_v1_GetRecipientsRequest__Output, _outreach_v1_GetRecipientsResponse__Output>
  ListRecipients: MethodDefinition<_outreach_v1_ListRecipientsRequest, _outreach_v1_ListRecipientsResponse, _outreach_v1_ListRecipientsRequest__Output, _outreach_v1_ListRecipientsResponse__Output>
  ResolveLink: MethodDefinition<_outreach_v1_ResolveLinkRequest, _outreach_v1_LinkRecipient, _outreach_v1_ResolveLinkRequest__Output, _outreach_v1_LinkRecipient__Output>
  ResolveLinks: MethodDefinition<_outreach_v1_ResolveLinksRequest, _outreach_v1_ResolveLinksResponse, _outreach_v1_ResolveLinksRequest__Output, _outreach_v1_ResolveLinksResponse__Output>
  UpdateRecipient: MethodDefinition<_outreach_v1_UpdateRecipientRequest, _outreach_v1_Recipient, _outreach_v1_UpdateRecipientRequest__Output, _outreach_v1_Recipient__Output>
}
