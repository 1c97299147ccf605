// Original file: outreach/v1/recipients.proto


export interface DeleteRecipientResponse {
  'success'?: (boolean);
  'id'?: (string);
}

export interface DeleteRecipientResponse__Output {
  'success': (boolean);
  'id': (string);
}
