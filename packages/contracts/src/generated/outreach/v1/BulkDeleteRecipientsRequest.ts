// Original file: outreach/v1/recipients.proto


export interface BulkDeleteRecipientsRequest {
  'projectId'?: (string);
  'ids'?: (string)[];
  'all'?: (boolean);
}

export interface BulkDeleteRecipientsRequest__Output {
  'projectId': (string);
  'ids': (string)[];
  'all': (boolean);
}
