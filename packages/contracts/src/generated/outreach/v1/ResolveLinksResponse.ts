// Original file: outreach/v1/recipients.proto

import type { LinkRecipient as _outreach_v1_LinkRecipient, LinkRecipient__Output as _outreach_v1_LinkRecipient__Output } from '../../outreach/v1/LinkRecipient';

export interface ResolveLinksResponse {
  'results'?: (_outreach_v1_LinkRecipient)[];
}

export interface ResolveLinksResponse__Output {
  'results': (_outreach_v1_LinkRecipient__Output)[];
}
