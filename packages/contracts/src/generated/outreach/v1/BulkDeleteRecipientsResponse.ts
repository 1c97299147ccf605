// Original file: outreach/v1/recipients.proto


export interface BulkDeleteRecipientsResponse {
  'success'?: (boolean);
  'deleted'?: (number);
  'ids'?: (string)[];
  'skippedCampaignIds'?: (string)[];
}

export interface BulkDeleteRecipientsResponse__Output {
  'success': (boolean);
  'deleted': (number);
  'ids': (string)[];
  'skippedCampaignIds': (string)[];
}
