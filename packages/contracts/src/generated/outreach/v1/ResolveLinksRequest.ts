// Original file: outreach/v1/recipients.proto


export interface ResolveLinksRequest {
  'tokens'?: (string)[];
}

export interface ResolveLinksRequest__Output {
  'tokens': (string)[];
}
