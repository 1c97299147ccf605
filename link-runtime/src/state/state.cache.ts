import {
  type CampaignSnapshot,
  type DeviceSnapshot,
  type RecipientChanged,
  subjects,
} from '@outreach/contracts';
import {
  type Consuming,
  follower,
  type JetStreamClient,
  keepConsuming,
  streamNames,
  TIMED_OUT,
  within,
} from '@outreach/platform';
import { JSONCodec } from 'nats';
import type { Logger } from 'pino';

const codec = JSONCodec();

/** Waits for `replayed`, logging every `everyMs` that the replay goes on and how much is left. */
export async function untilReplayed(
  replayed: Promise<void>,
  replay: { consumer: string; left: () => number | undefined },
  logger: Logger,
  everyMs: number,
): Promise<void> {
  const began = Date.now();
  while ((await within(replayed, everyMs)) === TIMED_OUT)
    logger.warn(
      { consumer: replay.consumer, snapshotsLeft: replay.left(), waitedMs: Date.now() - began },
      'state replay is slow: not ready until it is done',
    );
}

/**
 * Campaigns and devices held in memory, fed by followers (platform `follower`) of the state stream. Each
 * consumer first replays the latest snapshot of every subject, then follows changes; only a
 * snapshot with a higher version than the one held replaces it, so a late or replayed message
 * never rolls state back. Reads are plain map lookups: no store is queried per request.
 */
export class StateCache {
  private readonly campaigns = new Map<string, CampaignSnapshot>();
  private readonly devices = new Map<string, DeviceSnapshot>();
  private readonly consumptions: Consuming[] = [];
  private replayDone = false;

  constructor(private readonly logger: Logger) {}

  /** True once `start` has replayed what the stream held: the runtime is then ready to serve. */
  get replayed(): boolean {
    return this.replayDone;
  }

  /** The campaign's latest snapshot, if one was published. */
  campaign(id: string): CampaignSnapshot | undefined {
    return this.campaigns.get(id);
  }

  /** The device's latest snapshot, if one was published. */
  device(id: string): DeviceSnapshot | undefined {
    return this.devices.get(id);
  }

  /**
   * Applies a campaign snapshot when it is newer than the one held. A tombstone stays: a later
   * snapshot without `deletedAt` (a campaign service of the release before, mid-rollout) keeps it.
   */
  applyCampaign(s: CampaignSnapshot): void {
    const held = this.campaigns.get(s.id);
    if (held && s.version <= held.version) return;
    this.campaigns.set(s.id, held?.deletedAt && !s.deletedAt ? { ...s, deletedAt: held.deletedAt } : s);
  }

  /** Applies a device snapshot when it is newer than the one held. */
  applyDevice(s: DeviceSnapshot): void {
    const held = this.devices.get(s.id);
    if (!held || s.version > held.version) this.devices.set(s.id, s);
  }

  /**
   * Starts the two state consumers and resolves once both have replayed what the stream held
   * when they started, however long that takes (`replayed` then turns true): a runtime ready
   * before would refuse the links of every campaign not yet replayed as not running. While it
   * waits it logs every `slowLogMs` how many snapshots are left.
   */
  async start(js: JetStreamClient, prefix: string, slowLogMs = 5000): Promise<void> {
    const subj = subjects(prefix);
    const stream = streamNames(prefix).state;
    await Promise.all([
      this.follow(
        js,
        stream,
        subj.campaignStateAll,
        (d) => this.applyCampaign(d as CampaignSnapshot),
        slowLogMs,
      ),
      this.follow(js, stream, subj.deviceStateAll, (d) => this.applyDevice(d as DeviceSnapshot), slowLogMs),
    ]);
    this.replayDone = true;
  }

  /** Follows RecipientChanged events from now on, calling `onChange` for each. */
  async followRecipientChanges(
    js: JetStreamClient,
    prefix: string,
    onChange: (event: RecipientChanged) => void,
  ): Promise<void> {
    // Started again after a loss, it resumes from the last change it handled.
    const open = follower(js, {
      stream: streamNames(prefix).events,
      filterSubjects: subjects(prefix).recipientChanged,
      from: 'new',
    });
    this.consumptions.push(
      await keepConsuming(open, 'recipient changes', this.logger, (msg) => {
        try {
          onChange(codec.decode(msg.data) as RecipientChanged);
        } catch (err) {
          this.logger.warn({ err, subject: msg.subject }, 'bad RecipientChanged event skipped');
        }
        msg.ack();
      }),
    );
  }

  private async follow(
    js: JetStreamClient,
    stream: string,
    filter: string,
    apply: (data: unknown) => void,
    slowLogMs: number,
  ): Promise<void> {
    // The first consumer's backlog decides readiness; one started again after a loss replays the
    // latest snapshots too, and only newer versions replace what is held.
    let firstPending: number | undefined;
    let left: number | undefined;
    const open = follower(js, {
      stream,
      filterSubjects: filter,
      from: 'last_per_subject',
      onOpened: (pending) => {
        firstPending ??= pending;
        left ??= pending;
      },
    });
    let markReady: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => {
      markReady = resolve;
    });
    this.consumptions.push(
      await keepConsuming(open, filter, this.logger, (msg) => {
        try {
          apply(codec.decode(msg.data));
        } catch (err) {
          this.logger.warn({ err, subject: msg.subject }, 'bad state snapshot skipped');
        }
        msg.ack();
        left = msg.info.pending;
        if (left === 0) markReady();
      }),
    );
    if (firstPending === 0) markReady();
    await untilReplayed(ready, { consumer: filter, left: () => left }, this.logger, slowLogMs);
  }

  /** Stops every consumer. */
  async stop(): Promise<void> {
    await Promise.allSettled(this.consumptions.map((c) => c.stop()));
  }
}
