// Original file: outreach/v1/recipients.proto


export interface CountRecipientsResponse {
  'counts'?: ({[key: string]: number});
}

export interface CountRecipientsResponse__Output {
  'counts': ({[key: string]: number});
}
