// Original file: outreach/v1/campaigns.proto


export interface ApiKeyGrant {
  'keyId'?: (string);
  'projectId'?: (string);
  'scopes'?: (string)[];
  'rateLimitPerMinute'?: (number);
  'expiresAt'?: (string);
  '_expiresAt'?: "expiresAt";
}

export interface ApiKeyGrant__Output {
  'keyId': (string);
  'projectId': (string);
  'scopes': (string)[];
  'rateLimitPerMinute': (number);
  'expiresAt'?: (string);
  '_expiresAt'?: "expiresAt";
}
