// Original file: outreach/v1/recipients.proto


export interface DeleteRecipientRequest {
  'projectId'?: (string);
  'recipientId'?: (string);
  'byOperator'?: (boolean);
}

export interface DeleteRecipientRequest__Output {
  'projectId': (string);
  'recipientId': (string);
  'byOperator': (boolean);
}
