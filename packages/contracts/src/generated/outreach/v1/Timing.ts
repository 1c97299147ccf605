// Original file: outreach/v1/campaigns.proto

import type { Long } from '@grpc/proto-loader';

export interface Timing {
  'state'?: (string);
  'now'?: (string);
  'startsInSeconds'?: (number | string | Long);
  'runningForSeconds'?: (number | string | Long);
  'endedAgoSeconds'?: (number | string | Long);
  '_startsInSeconds'?: "startsInSeconds";
  '_runningForSeconds'?: "runningForSeconds";
  '_endedAgoSeconds'?: "endedAgoSeconds";
}

export interface Timing__Output {
  'state': (string);
  'now': (string);
  'startsInSeconds'?: (number);
  'runningForSeconds'?: (number);
  'endedAgoSeconds'?: (number);
  '_startsInSeconds'?: "startsInSeconds";
  '_runningForSeconds'?: "runningForSeconds";
  '_endedAgoSeconds'?: "endedAgoSeconds";
}
