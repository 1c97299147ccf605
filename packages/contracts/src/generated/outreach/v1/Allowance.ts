// Original file: outreach/v1/campaigns.proto

import type { Long } from '@grpc/proto-loader';

export interface Allowance {
  'used'?: (number | string | Long);
  'included'?: (number | string | Long);
  'remaining'?: (number | string | Long);
  'exhausted'?: (boolean);
  '_included'?: "included";
  '_remaining'?: "remaining";
}

export interface Allowance__Output {
  'used': (number);
  'included'?: (number);
  'remaining'?: (number);
  'exhausted': (boolean);
  '_included'?: "included";
  '_remaining'?: "remaining";
}
