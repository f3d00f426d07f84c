import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { schedulePeriodicJob } from '../common/jobs/periodic-job.js';
import { CLEAR, mostRestrictive, rankOf, type TlpRank } from '../common/markings/tlp.js';
import { Metrics } from '../common/metrics/metrics.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { FormatRecord, Rejection } from '../formats/forms.js';
import { BatchService, type RunForm, type RunWrite } from '../intel/batch/batch.service.js';
import { sourceOrigin } from '../intel/write-origin.js';
import type { DryRunView, RunStartedView } from './dto/source.dto.js';
import { FEED_KINDS, readFeed } from './feed-kinds.js';
import { tooFewItems } from './removal.js';
import { RunFailure } from './run-failures.js';
import { closingOf, failureOf, isRepeat, settledOutcome, unchangedCount, type Outcome, type Settlement } from './run-outcome.js';
import { SourceClaimsRepository } from './source-claims.repository.js';
import { recordsOf } from './source-records.js';
import type { SourceRow } from './source-rows.repository.js';
import { SourceRunsRepository, type FinishedRun, type Lease } from './source-runs.repository.js';
import { SourcesErrors } from './sources.errors.js';
import { DRAFT_SOURCE_ID, SourcesService } from './sources.service.js';

/** Rejections kept with a run (extensions §13): the first 100. */
const KEPT_REJECTIONS = 100;
/** Indicators a dry run of a form shows as its sample (the console's "Test"). */
const SAMPLED = 10;

/** What a run did, as its log row and a dry run's answer show it. */
interface RunResult {
  outcome: Outcome;
  httpStatus: number | null;
  bytes: number | null;
  items: number;
  added: number;
  updated: number;
  unchanged: number;
  withdrawn: number;
  rejected: number;
  rejections: Rejection[];
  /** The first indicators the body gave (their keys' values), in body order. */
  sample: string[];
  error: { code: string; message: string } | null;
  retryAfterSeconds: number | null;
}

/** A dry run of a form not stored yet: what `POST …/test` answers, and a sample of what it read. */
export type DraftRunView = DryRunView & { sample: string[] };

/** The source's request headers: its own (secrets) and basic authentication. */
function headersOf(source: SourceRow): Record<string, string> {
  const headers = { ...source.secrets.headers };
  if (source.settings.username !== undefined) {
    headers.authorization = `Basic ${Buffer.from(`${source.settings.username}:${source.secrets.password ?? ''}`).toString('base64')}`;
  }
  return headers;
}

/**
 * Runs of sources (extensions §13): fetch (conditional, streamed, within the address policy), parse by
 * kind, and write through the batch path in one transaction with the run's claims (BatchService.applyRun),
 * so a run is applied whole or not at all. The schedule holds across instances through a row lease
 * (SourceRunsRepository.leaseDue); a manual run takes the same lease.
 */
@Injectable()
export class SourceRunsService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(SourceRunsService.name);
  private stop?: () => void;
  /** Runs of this instance under way (manual ones are not awaited by their request): awaited at shutdown. */
  private readonly running = new Set<Promise<void>>();
  /** Aborted at shutdown: fetches under way end at once (their runs wrote nothing and are due again). */
  private readonly stopping = new AbortController();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: SourceRunsRepository,
    private readonly claims: SourceClaimsRepository,
    private readonly sources: SourcesService,
    private readonly batch: BatchService,
    private readonly metrics: Metrics,
  ) {}

  onModuleInit(): void {
    this.stop = schedulePeriodicJob('SourceSchedule', this.config.sources.pollSeconds, () => this.runDue());
  }

  async onModuleDestroy(): Promise<void> {
    this.stop?.();
    this.stopping.abort();
    await Promise.allSettled([...this.running]);
    await this.sources.policy.close();
  }

  /** 202: a run now, in the background; 409 RunInProgress while one holds the lease. Does not move nextRunAt. */
  async start(name: string, keyID: number | null): Promise<RunStartedView> {
    const runID = randomUUID();
    const leased = await this.repository.leaseNow(name, runID, keyID, this.config.sources.leaseSeconds);
    if (leased === 'absent') throw SourcesErrors.notFound(name);
    if (leased === 'busy') throw SourcesErrors.runInProgress(name);
    const lease = await this.repository.sourceOfLease(runID);
    if (lease !== undefined) this.track(this.run(lease));
    return { runID };
  }

  /**
   * The schedule: takes due sources one at a time until none is left (each instance, every
   * SOURCE_POLL_SECONDS); public for tests. Also prunes the run log.
   */
  async runDue(): Promise<void> {
    // Not once the instance is stopping: its interrupted runs are due again, for the other instances.
    while (!this.stopping.signal.aborted) {
      const lease = await this.repository.leaseDue(randomUUID(), this.config.sources.leaseSeconds);
      if (lease === undefined) break;
      await this.track(this.run(lease));
    }
    if (!this.stopping.signal.aborted) await this.repository.pruneRuns();
  }

  /** `POST …/test`: what a run would do now, from a fresh fetch (no validators), writing and storing nothing. */
  async test(name: string): Promise<DryRunView> {
    const { sample: _sample, ...view } = await this.dryRun(await this.sources.find(name));
    return view;
  }

  /** A dry run of a form before it is stored (SourcesService.draft: a new source, or `name` as the form changes it). */
  async testForm(body: unknown, name?: string): Promise<DraftRunView> {
    return this.dryRun(await this.sources.draft(body, name));
  }

  private async dryRun(source: SourceRow): Promise<DraftRunView> {
    const result = await this.execute(source, null, true);
    const { outcome, bytes: _bytes, retryAfterSeconds: _retry, ...counts } = result;
    return { ...counts, suspect: outcome === 'suspect' };
  }

  private track(run: Promise<void>): Promise<void> {
    this.running.add(run);
    return run.finally(() => this.running.delete(run));
  }

  /** One leased run, its lease renewed while it lasts, closed with its log row whatever happens. */
  private async run(lease: Lease): Promise<void> {
    const renew = setInterval(
      () => void this.repository.renewLease(lease.runID, this.config.sources.leaseSeconds).catch(() => undefined),
      (this.config.sources.leaseSeconds * 1000) / 3,
    );
    try {
      const result = await this.execute(lease.source, lease, false);
      const { retryAfterSeconds, unchanged: _unchanged, sample: _sample, ...row } = result;
      await this.repository.finish(lease.runID, row as FinishedRun, retryAfterSeconds);
      this.metrics.sourceRuns.labels(lease.source.name, result.outcome).inc();
      if (result.error !== null) this.logger.warn(`source ${lease.source.name}: run ${lease.runID} failed: ${result.error.code}: ${result.error.message}`);
    } catch (error) {
      this.logger.error(`source ${lease.source.name}: run ${lease.runID}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    } finally {
      clearInterval(renew);
    }
  }

  /**
   * Fetch, parse and write as the body arrives (BatchService.applyRun stages it in PostgreSQL, so memory
   * stays bounded whatever its size): a failure anywhere is outcome `failed` with nothing written.
   */
  private async execute(source: SourceRow, lease: Lease | null, dryRun: boolean): Promise<RunResult> {
    const result: RunResult = {
      outcome: 'failed',
      httpStatus: null,
      bytes: null,
      items: 0,
      added: 0,
      updated: 0,
      unchanged: 0,
      withdrawn: 0,
      rejected: 0,
      rejections: [],
      sample: [],
      error: null,
      retryAfterSeconds: null,
    };
    const keep = (rejection: Rejection) => {
      result.rejected += 1;
      if (result.rejections.length < KEPT_REJECTIONS) result.rejections.push(rejection);
    };
    try {
      const fetched = FEED_KINDS.has(source.kind)
        ? await readFeed(source.kind, {
            policy: this.sources.policy,
            limits: this.config.sources,
            settings: source.settings,
            headers: headersOf(source),
            last: dryRun ? null : { etag: source.etag, lastModified: source.lastModified, state: source.feedState ?? null },
            stop: this.stopping.signal,
          })
        : await this.sources.policy.get(
            { url: source.settings.url, headers: headersOf(source), ...(!dryRun && { etag: source.etag, lastModified: source.lastModified }) },
            this.stopping.signal,
          );
      result.httpStatus = fetched.httpStatus;
      // A feed kind (taxii21, misp) reads only what is new upstream and says itself which claims end; it is
      // never a repeat of its previous body, and its withdrawals are known once its records are read.
      const feed = !fetched.notModified && 'records' in fetched ? fetched.end : null;
      const records = fetched.notModified
        ? null
        : 'records' in fetched
          ? fetched.records
          : recordsOf(source.kind, source.settings, fetched.body, fetched.headers.get('content-type'));
      const origin = sourceOrigin(source.name, lease?.runID ?? `test:${source.name}`, lease?.keyID ?? null);
      // What the settlement decides inside the transaction, for the close and then the outcome (run-outcome.ts).
      const decided: { settlement: Settlement | null } = { settlement: null };
      let write: RunWrite;
      try {
        write = await this.batch.applyRun(origin, source.collection, {
          dryRun,
          forms: records === null ? null : this.formsOf(records, rankOf(source.settings.tlp) ?? CLEAR, result, keep),
          previousDigest: dryRun || feed !== null ? null : source.bodyDigest,
          fresh: source.claims === 0,
          rejected: (line, value, reason) => keep({ line, value, reason }),
          settle: async (manager, staged) => {
            const withdrawn = feed?.withdrawn ?? [];
            result.items += withdrawn.length;
            const tooFew = tooFewItems(staged.body?.forms ?? null, withdrawn.length, source.settings.minItems);
            // A form not stored yet claims nothing: only too few items would hold its first run back.
            if (source.id === DRAFT_SOURCE_ID) return void (decided.settlement = { body: staged.body, suspect: tooFew });
            const { suspect } = await this.claims.settle(manager, {
              sourceId: source.id,
              collection: source.collection,
              runID: lease?.runID ?? null,
              seen: isRepeat(staged.body) ? null : staged.seenKeys,
              ended: staged.endedKeys,
              remarked: staged.remarkedKeys,
              withdrawn,
              snapshot: source.settings.mode === 'snapshot',
              policy: source.settings.removal,
              maxRemovalRatio: source.settings.maxRemovalRatio,
              tooFew,
            });
            decided.settlement = { body: staged.body, suspect };
          },
          close: async (manager) => {
            if (dryRun || decided.settlement === null) return;
            const closing = closingOf(decided.settlement, fetched, feed?.state ?? null);
            // What a suspect run held back must be weighed again by the next run, from a full fetch.
            if (closing.suspect) return this.repository.recordSuspect(manager, source.id, this.config.sources.leaseSeconds);
            await this.repository.recordSuccess(manager, source.id, closing.validators, this.config.sources.leaseSeconds);
          },
        });
      } finally {
        if (!fetched.notModified) result.bytes = fetched.bytes();
      }
      // applyRun settles every run it completes; without a settlement the run wrote as a 304 does.
      const settlement = decided.settlement ?? { body: null, suspect: false };
      result.outcome = settledOutcome(settlement);
      result.added = write.added;
      result.updated = write.updated;
      result.unchanged = unchangedCount(settlement, write);
      result.withdrawn = write.withdrawn;
    } catch (error) {
      const failure = failureOf(error, result.httpStatus);
      if (failure === undefined) throw error;
      Object.assign(result, failure, { outcome: 'failed' satisfies Outcome, added: 0, updated: 0, unchanged: 0, withdrawn: 0 });
    }
    return result;
  }

  /**
   * The forms of a body through its kind's parser (or of a feed kind's requests), as they arrive, counted
   * into the run's items, each marked with the source's `tlp` raised by the record's own (extensions §19),
   * with the credibility the record gives itself (extensions §18; none: its claim takes the source's);
   * rejections go to `keep`, and a failure of the format fails the run (thrown: nothing is written).
   */
  private async *formsOf(
    records: AsyncIterable<FormatRecord>,
    sourceTlp: TlpRank,
    result: RunResult,
    keep: (rejection: Rejection) => void,
  ): AsyncGenerator<RunForm> {
    for await (const record of records) {
      if (record.kind === 'failed') throw new RunFailure(record.failure.code, record.failure.message);
      result.items += 1;
      if (record.kind === 'rejected') keep(record.rejection);
      else {
        if (result.sample.length < SAMPLED) result.sample.push(record.form.keys.map((key) => key.value).join(' '));
        yield { line: record.line, form: record.form, tlp: mostRestrictive([sourceTlp, record.tlp]), credibility: record.credibility ?? null };
      }
    }
  }
}
