// Original file: outreach/v1/recipients.proto


export interface UpdateRecipientRequest {
  'projectId'?: (string);
  'recipientId'?: (string);
  'patchJson'?: (string);
  'byOperator'?: (boolean);
}

export interface UpdateRecipientRequest__Output {
  'projectId': (string);
  'recipientId': (string);
  'patchJson': (string);
  'byOperator': (boolean);
}
