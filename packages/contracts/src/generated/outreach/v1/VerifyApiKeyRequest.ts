// Original file: outreach/v1/campaigns.proto


export interface VerifyApiKeyRequest {
  'keyHash'?: (string);
}

export interface VerifyApiKeyRequest__Output {
  'keyHash': (string);
}
