import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import type { AccessRequest } from '../common/guard/access.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { isDatabaseUnavailable } from '../database/connection-failure.js';
import { auditEntryOf, auditKindOf, type AuditEntry } from './audit-entry.js';
import { AuditRepository } from './audit.repository.js';

/** Most entries in one INSERT: bounds one statement's parameters and time. */
const MOST_PER_INSERT = 1000;
/**
 * INSERTs of one instance in flight at once. More than one, so that an entry rarely waits behind a statement
 * that left without it (its answer would wait two commits); few, so that under load entries queue and share
 * statements. Two, measured (bench row 3c, 16 writers, runs alternating four and two, 25 Nov 2026): with
 * four, entries mostly went one per statement (0.76 INSERTs and commits per write), 555–558 writes/s; with
 * two, 0.47 per write, 647–741 writes/s, and answers came sooner too (p50 20–23 ms against 26–27 ms), the
 * machine having less to do.
 */
const MOST_IN_FLIGHT = 2;

interface Waiting {
  entry: AuditEntry;
  resolve: () => void;
  reject: (error: unknown) => void;
}

const RECORDED = Symbol('auditRecorded');
const OUTAGE_LOG_INTERVAL_MS = 10_000;

/**
 * Records audited requests before they are answered (the interceptor for answers, the exception filter for
 * refusals call `afterOutcome` and hold the answer until it settles).
 *
 * Entries of one instance are grouped: at most MOST_IN_FLIGHT INSERTs run at a time, and entries that arrive
 * while they are all busy wait for the next free one, which carries all of them (up to MOST_PER_INSERT). So
 * under load a write costs a share of one statement instead of a statement of its own, and its answer still
 * waits for the commit of the statement that carries its entry: every answered write has its entry stored,
 * also when the process is killed right after (its entry was committed before the first byte of the answer),
 * and a write whose entry could not be stored is answered with an error.
 */
@Injectable()
export class AuditTrail implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Audit');
  private waiting: Waiting[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private scheduled = false;
  private lastOutageLog = 0;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: AuditRepository,
  ) {}

  /** AUDIT=off: nothing is recorded on this instance. */
  get enabled(): boolean {
    return this.config.audit;
  }

  /**
   * Records the request's outcome when it is audited, once per request; undefined when there is nothing to
   * wait for (auditing off, a request that is not audited, or one recorded already).
   */
  afterOutcome(request: AccessRequest, status: number, result?: unknown): Promise<void> | undefined {
    if (!this.config.audit || (request as { [RECORDED]?: true })[RECORDED]) return undefined;
    const kind = auditKindOf(request);
    if (kind === undefined || (kind === 'read' && !this.config.auditReads)) return undefined;
    (request as { [RECORDED]?: true })[RECORDED] = true;
    return this.record(auditEntryOf(request, status, result));
  }

  /** Resolves once the entry is committed. */
  record(entry: AuditEntry): Promise<void> {
    const stored = new Promise<void>((resolve, reject) => this.waiting.push({ entry, resolve, reject }));
    this.schedule();
    return stored;
  }

  /** Requests are drained before shutdown; entries still on their way are written before the pool closes. */
  async beforeApplicationShutdown(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** After the current job, so that the entries of answers settled in the same turn share a statement. */
  private schedule(): void {
    if (this.scheduled || this.inFlight.size >= MOST_IN_FLIGHT) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.insertWaiting();
    });
  }

  /** During a database outage every request fails alike: one line per OUTAGE_LOG_INTERVAL_MS says so. */
  private logFailure(count: number, error: unknown): void {
    const message = `${count} audit entr${count === 1 ? 'y' : 'ies'} could not be stored: ${String(error)}`;
    if (!isDatabaseUnavailable(error)) {
      this.logger.error(message);
    } else if (Date.now() - this.lastOutageLog >= OUTAGE_LOG_INTERVAL_MS) {
      this.lastOutageLog = Date.now();
      this.logger.warn(`${message} (the database is not reachable)`);
    }
  }

  private insertWaiting(): void {
    if (this.waiting.length === 0 || this.inFlight.size >= MOST_IN_FLIGHT) return;
    const group = this.waiting.splice(0, MOST_PER_INSERT);
    const done = this.repository.insert(group.map((waiting) => waiting.entry)).then(
      () => group.forEach((waiting) => waiting.resolve()),
      (error: unknown) => {
        this.logFailure(group.length, error);
        group.forEach((waiting) => waiting.reject(error));
      },
    );
    this.inFlight.add(done);
    void done.finally(() => {
      this.inFlight.delete(done);
      this.schedule();
    });
    this.schedule();
  }
}
