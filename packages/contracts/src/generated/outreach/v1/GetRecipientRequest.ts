// Original file: outreach/v1/recipients.proto


export interface GetRecipientRequest {
  'projectId'?: (string);
  'recipientId'?: (string);
}

export interface GetRecipientRequest__Output {
  'projectId': (string);
  'recipientId': (string);
}
