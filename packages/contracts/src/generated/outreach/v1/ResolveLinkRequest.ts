// Original file: outreach/v1/recipients.proto


export interface ResolveLinkRequest {
  'token'?: (string);
}

export interface ResolveLinkRequest__Output {
  'token': (string);
}
