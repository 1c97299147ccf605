import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { BulkDeleteRecipientsRequest as _outreach_v1_BulkDeleteRecipientsRequest, BulkDeleteRecipientsRequest__Output as _outreach_v1_BulkDeleteRecipientsRequest__Output } from './outreach/v1/BulkDeleteRecipientsRequest';
import type { BulkDeleteRecipientsResponse as _outreach_v1_BulkDeleteRecipientsResponse, BulkDeleteRecipientsResponse__Output as _outreach_v1_BulkDeleteRecipientsResponse__Output } from './outreach/v1/BulkDeleteRecipientsResponse';
import type { CountRecipientsRequest as _outreach_v1_CountRecipientsRequest, CountRecipientsRequest__Output as _outreach_v1_CountRecipientsRequest__Output } from './outreach/v1/CountRecipientsRequest';
import type { CountRecipientsResponse as _outreach_v1_CountRecipientsResponse, CountRecipientsResponse__Output as _outreach_v1_CountRecipientsResponse__Output } from './outreach/v1/CountRecipientsResponse';
import type { CreateRecipientsRequest as _outreach_v1_CreateRecipientsRequest, CreateRecipientsRequest__Output as _outreach_v1_CreateRecipientsRequest__Output } from './outreach/v1/CreateRecipientsRequest';
import type { CreateRecipientsResponse as _outreach_v1_CreateRecipientsResponse, CreateRecipientsResponse__Output as _outreach_v1_CreateRecipientsResponse__Output } from './outreach/v1/CreateRecipientsResponse';
import type { CreateResult as _outreach_v1_CreateResult, CreateResult__Output as _outreach_v1_CreateResult__Output } from './outreach/v1/CreateResult';
import type { DeleteRecipientRequest as _outreach_v1_DeleteRecipientRequest, DeleteRecipientRequest__Output as _outreach_v1_DeleteRecipientRequest__Output } from './outreach/v1/DeleteRecipientRequest';
import type { DeleteRecipientResponse as _outreach_v1_DeleteRecipientResponse, DeleteRecipientResponse__Output as _outreach_v1_DeleteRecipientResponse__Output } from './outreach/v1/DeleteRecipientResponse';
import type { GetRecipientRequest as _outreach_v1_GetRecipientRequest, GetRecipientRequest__Output as _outreach_v1_GetRecipientRequest__Output } from './outreach/v1/GetRecipientRequest';
import type { GetRecipientsRequest as _outreach_v1_GetRecipientsRequest, GetRecipientsRequest__Output as _outreach_v1_GetRecipientsRequest__Output } from './outreach/v1/GetRecipientsRequest';
import type { GetRecipientsResponse as _outreach_v1_GetRecipientsResponse, GetRecipientsResponse__Output as _outreach_v1_GetRecipientsResponse__Output } from './outreach/v1/GetRecipientsResponse';
import type { LinkRecipient as _outreach_v1_LinkRecipient, LinkRecipient__Output as _outreach_v1_LinkRecipient__Output } from './outreach/v1/LinkRecipient';
import type { ListRecipientsRequest as _outreach_v1_ListRecipientsRequest, ListRecipientsRequest__Output as _outreach_v1_ListRecipientsRequest__Output } from './outreach/v1/ListRecipientsRequest';
import type { ListRecipientsResponse as _outreach_v1_ListRecipientsResponse, ListRecipientsResponse__Output as _outreach_v1_ListRecipientsResponse__Output } from './outreach/v1/ListRecipientsResponse';
import type { Recipient as _outreach_v1_Recipient, Recipient__Output as _outreach_v1_Recipient__Output } from './outreach/v1/Recipient';
import type { RecipientLookup as _outreach_v1_RecipientLookup, RecipientLookup__Output as _outreach_v1_RecipientLookup__Output } from './outreach/v1/RecipientLookup';
import type { RecipientServiceClient as _outreach_v1_RecipientServiceClient, RecipientServiceDefinition as _outreach_v1_RecipientServiceDefinition } from './outreach/v1/RecipientService';
import type { ResolveLinkRequest as _outreach_v1_ResolveLinkRequest, ResolveLinkRequest__Output as _outreach_v1_ResolveLinkRequest__Output } from './outreach/v1/ResolveLinkRequest';
import type { ResolveLinksRequest as _outreach_v1_ResolveLinksRequest, ResolveLinksRequest__Output as _outreach_v1_ResolveLinksRequest__Output } from './outreach/v1/ResolveLinksRequest';
import type { ResolveLinksResponse as _outreach_v1_ResolveLinksResponse, ResolveLinksResponse__Output as _outreach_v1_ResolveLinksResponse__Output } from './outreach/v1/ResolveLinksResponse';
import type { UpdateRecipientRequest as _outreach_v1_UpdateRecipientRequest, UpdateRecipientRequest__Output as _outreach_v1_UpdateRecipientRequest__Output } from './outreach/v1/UpdateRecipientRequest';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  outreach: {
    v1: {
      BulkDeleteRecipientsRequest: MessageTypeDefinition<_outreach_v1_BulkDeleteRecipientsRequest, _outreach_v1_BulkDeleteRecipientsRequest__Output>
      BulkDeleteRecipientsResponse: MessageTypeDefinition<_outreach_v1_BulkDeleteRecipientsResponse, _outreach_v1_BulkDeleteRecipientsResponse__Output>
      CountRecipientsRequest: MessageTypeDefinition<_outreach_v1_CountRecipientsRequest, _outreach_v1_CountRecipientsRequest__Output>
      CountRecipientsResponse: MessageTypeDefinition<_outreach_v1_CountRecipientsResponse, _outreach_v1_CountRecipientsResponse__Output>
      CreateRecipientsRequest: MessageTypeDefinition<_outreach_v1_CreateRecipientsRequest, _outreach_v1_CreateRecipientsRequest__Output>
      CreateRecipientsResponse: MessageTypeDefinition<_outreach_v1_CreateRecipientsResponse, _outreach_v1_CreateRecipientsResponse__Output>
      CreateResult: MessageTypeDefinition<_outreach_v1_CreateResult, _outreach_v1_CreateResult__Output>
      DeleteRecipientRequest: MessageTypeDefinition<_outreach_v1_DeleteRecipientRequest, _outreach_v1_DeleteRecipientRequest__Output>
      DeleteRecipientResponse: MessageTypeDefinition<_outreach_v1_DeleteRecipientResponse, _outreach_v1_DeleteRecipientResponse__Output>
      GetRecipientRequest: MessageTypeDefinition<_outreach_v1_GetRecipientRequest, _outreach_v1_GetRecipientRequest__Output>
      GetRecipientsRequest: MessageTypeDefinition<_outreach_v1_GetRecipientsRequest, _outreach_v1_GetRecipientsRequest__Output>
      GetRecipientsResponse: MessageTypeDefinition<_outreach_v1_GetRecipientsResponse, _outreach_v1_GetRecipientsResponse__Output>
      LinkRecipient: MessageTypeDefinition<_outreach_v1_LinkRecipient, _outreach_v1_LinkRecipient__Output>
      ListRecipientsRequest: MessageTypeDefinition<_outreach_v1_ListRecipientsRequest, _outreach_v1_ListRecipientsRequest__Output>
      ListRecipientsResponse: MessageTypeDefinition<_outreach_v1_ListRecipientsResponse, _outreach_v1_ListRecipientsResponse__Output>
      Recipient: MessageTypeDefinition<_outreach_v1_Recipient, _outreach_v1_Recipient__Output>
      RecipientLookup: MessageTypeDefinition<_outreach_v1_RecipientLookup, _outreach_v1_RecipientLookup__Output>
      RecipientService: SubtypeConstructor<typeof grpc.Client, _outreach_v1_RecipientServiceClient> & { service: _outreach_v1_RecipientServiceDefinition }
      ResolveLinkRequest: MessageTypeDefinition<_outreach_v1_ResolveLinkRequest, _outreach_v1_ResolveLinkRequest__Output>
      ResolveLinksRequest: MessageTypeDefinition<_outreach_v1_ResolveLinksRequest, _outreach_v1_ResolveLinksRequest__Output>
      ResolveLinksResponse: MessageTypeDefinition<_outreach_v1_ResolveLinksResponse, _outreach_v1_ResolveLinksResponse__Output>
      UpdateRecipientRequest: MessageTypeDefinition<_outreach_v1_UpdateRecipientRequest, _outreach_v1_UpdateRecipientRequest__Output>
    }
  }
}

