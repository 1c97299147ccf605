// Original file: outreach/v1/recipients.proto


export interface Recipient {
  'id'?: (string);
  'campaignId'?: (string);
  'projectId'?: (string);
  'externalId'?: (string);
  'label'?: (string);
  'metadata'?: ({[key: string]: string});
  'deviceId'?: (string);
  'isActive'?: (boolean);
  'link'?: (string);
  'injectionMode'?: (string);
  'injectionInstructions'?: (string);
  'maxTotalInteractions'?: (number);
  'maxInteractionsPerWindow'?: (number);
  'windowSeconds'?: (number);
  'interactionCount'?: (number);
  'lastInteractionAt'?: (string);
  'disabledMessage'?: (string);
  'cooldownMessage'?: (string);
  'distillationStatus'?: (string);
  'distillationLensId'?: (string);
  'distillationError'?: (string);
  'createdAt'?: (string);
  '_externalId'?: "externalId";
  '_label'?: "label";
  '_injectionInstructions'?: "injectionInstructions";
  '_maxTotalInteractions'?: "maxTotalInteractions";
  '_maxInteractionsPerWindow'?: "maxInteractionsPerWindow";
  '_windowSeconds'?: "windowSeconds";
  '_lastInteractionAt'?: "lastInteractionAt";
  '_disabledMessage'?: "disabledMessage";
  '_cooldownMessage'?: "cooldownMessage";
  '_distillationLensId'?: "distillationLensId";
  '_distillationError'?: "distillationError";
}

export interface Recipient__Output {
  'id': (string);
  'campaignId': (string);
  'projectId': (string);
  'externalId'?: (string);
  'label'?: (string);
  'metadata': ({[key: string]: string});
  'deviceId': (string);
  'isActive': (boolean);
  'link': (string);
  'injectionMode': (string);
  'injectionInstructions'?: (string);
  'maxTotalInteractions'?: (number);
  'maxInteractionsPerWindow'?: (number);
  'windowSeconds'?: (number);
  'interactionCount': (number);
  'lastInteractionAt'?: (string);
  'disabledMessage'?: (string);
  'cooldownMessage'?: (string);
  'distillationStatus': (string);
  'distillationLensId'?: (string);
  'distillationError'?: (string);
  'createdAt': (string);
  '_externalId'?: "externalId";
  '_label'?: "label";
  '_injectionInstructions'?: "injectionInstructions";
  '_maxTotalInteractions'?: "maxTotalInteractions";
  '_maxInteractionsPerWindow'?: "maxInteractionsPerWindow";
  '_windowSeconds'?: "windowSeconds";
  '_lastInteractionAt'?: "lastInteractionAt";
  '_disabledMessage'?: "disabledMessage";
  '_cooldownMessage'?: "cooldownMessage";
  '_distillationLensId'?: "distillationLensId";
  '_distillationError'?: "distillationError";
}
