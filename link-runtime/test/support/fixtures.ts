import type {
  CampaignSnapshot,
  DeviceSnapshot,
  RecipientChanged,
  RecipientMessage,
} from '@outreach/contracts';
import { subjects } from '@outreach/contracts';
import { ensureStreams, newId, newLinkToken } from '@outreach/platform';
import { connect, JSONCodec, type NatsConnection } from 'nats';

const codec = JSONCodec();
let version = Date.now();

/** Publishes snapshots and events to a namespace's streams, as campaign- and recipient-service do. */
export class StatePublisher {
  private constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
  ) {}

  static async connect(url: string, prefix: string): Promise<StatePublisher> {
    const nc = await connect({ servers: url });
    await ensureStreams(await nc.jetstreamManager(), prefix);
    return new StatePublisher(nc, prefix);
  }

  async campaign(c: CampaignSnapshot): Promise<CampaignSnapshot> {
    const next = { ...c, version: ++version };
    await this.nc.jetstream().publish(subjects(this.prefix).campaignState(c.id), codec.encode(next));
    return next;
  }

  async device(d: DeviceSnapshot): Promise<DeviceSnapshot> {
    const next = { ...d, version: ++version };
    await this.nc.jetstream().publish(subjects(this.prefix).deviceState(d.id), codec.encode(next));
    return next;
  }

  /** As the recipient service announces a change: by the recipient's id, without its link's token. */
  async recipientChanged(r: RecipientMessage, change: 'updated' | 'deleted'): Promise<void> {
    const event: RecipientChanged = {
      recipientId: r.id,
      campaignId: r.campaignId,
      projectId: r.projectId,
      change,
      at: new Date().toISOString(),
    };
    await this.nc.jetstream().publish(subjects(this.prefix).recipientChanged, codec.encode(event));
  }

  get connection(): NatsConnection {
    return this.nc;
  }

  async close(): Promise<void> {
    await this.nc.drain();
  }
}

/** An active metered campaign (launched yesterday, ending in a week) with no budget cap. */
export function activeCampaign(overrides: Partial<CampaignSnapshot> = {}): CampaignSnapshot {
  const day = 24 * 3600 * 1000;
  const now = Date.now();
  return {
    id: newId('cmp'),
    projectId: 'prj_test',
    name: 'Spring outreach',
    deviceId: 'dev_x',
    budgetMode: 'metered',
    startDate: new Date(now - day).toISOString(),
    endDate: new Date(now + 7 * day).toISOString(),
    launchedAt: new Date(now - 2 * day).toISOString(),
    haltedAt: null,
    recipientCap: null,
    pricePerConversation: null,
    fixedPrice: null,
    includedConversations: null,
    createdAt: new Date(now - 3 * day).toISOString(),
    version: 0,
    ...overrides,
  };
}

/** An active device speaking English and German, with knowledge and instructions. */
export function device(overrides: Partial<DeviceSnapshot> = {}): DeviceSnapshot {
  return {
    id: newId('dev'),
    projectId: 'prj_test',
    name: 'Acme Help',
    isActive: true,
    ipAllowList: [],
    languages: ['en', 'de'],
    defaultLanguage: 'en',
    styling: { title: 'Acme Help', primaryColor: '#0a7d4f', backgroundColor: '#f4f7f5' },
    voice: { enabled: false },
    persona: 'You are Ada, the assistant of Acme.',
    customInstructions: 'Keep answers short.',
    knowledge: [
      { id: 'k1', title: 'Opening hours', content: 'Open Monday to Friday, 9 to 17.' },
      { id: 'k2', title: 'Returns', content: 'Returns are accepted within 30 days.' },
    ],
    version: 0,
    ...overrides,
  };
}

/** A recipient of `campaign` as ResolveLink returns it (unset optional fields are undefined). */
export function recipient(
  campaign: CampaignSnapshot,
  overrides: Partial<RecipientMessage> = {},
): {
  token: string;
  recipient: RecipientMessage;
} {
  const token = newLinkToken();
  return {
    token,
    recipient: {
      id: newId('rcp'),
      campaignId: campaign.id,
      projectId: campaign.projectId,
      metadata: {},
      deviceId: campaign.deviceId,
      isActive: true,
      link: `http://localhost/i/${token}`,
      injectionMode: 'append',
      interactionCount: 0,
      distillationStatus: 'none',
      createdAt: new Date().toISOString(),
      ...overrides,
    } as RecipientMessage,
  };
}
