// Original file: outreach/v1/campaigns.proto

import type { Timing as _outreach_v1_Timing, Timing__Output as _outreach_v1_Timing__Output } from '../../outreach/v1/Timing';

export interface Campaign {
  'id'?: (string);
  'projectId'?: (string);
  'name'?: (string);
  'state'?: (string);
  'budgetMode'?: (string);
  'deviceId'?: (string);
  'startDate'?: (string);
  'endDate'?: (string);
  'timing'?: (_outreach_v1_Timing | null);
  'recipientCap'?: (number);
  'launchedAt'?: (string);
  'haltedAt'?: (string);
  'createdAt'?: (string);
  '_recipientCap'?: "recipientCap";
  '_launchedAt'?: "launchedAt";
  '_haltedAt'?: "haltedAt";
}

export interface Campaign__Output {
  'id': (string);
  'projectId': (string);
  'name': (string);
  'state': (string);
  'budgetMode': (string);
  'deviceId': (string);
  'startDate': (string);
  'endDate': (string);
  'timing': (_outreach_v1_Timing__Output | null);
  'recipientCap'?: (number);
  'launchedAt'?: (string);
  'haltedAt'?: (string);
  'createdAt': (string);
  '_recipientCap'?: "recipientCap";
  '_launchedAt'?: "launchedAt";
  '_haltedAt'?: "haltedAt";
}
