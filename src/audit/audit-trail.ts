import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import type { AccessRequest } from '../common/guard/access.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { type AuditEntry, auditEntryOf, auditKindOf } from './audit-entry.js';
import { AuditRepository } from './audit.repository.js';

/** Most entries in one INSERT: bounds one statement's parameters and time. */
const MOST_PER_INSERT = 1000;

interface Waiting {
  entry: AuditEntry;
  resolve: () => void;
  reject: (error: unknown) => void;
}

const RECORDED = Symbol('auditRecorded');

/**
 * Records audited requests before they are answered (the interceptor for answers, the exception filter for
 * refusals call `afterOutcome` and hold the answer until it settles).
 *
 * Entries of one instance are grouped: one INSERT is in flight at a time; entries that arrive meanwhile wait
 * for the next one, which carries all of them (up to MOST_PER_INSERT). So under load a write costs a share of
 * one statement instead of a statement of its own, and its answer still waits for the commit of the statement
 * that carries its entry: every answered write has its entry stored, also when the process is killed right
 * after (its entry was committed before the first byte of the answer), and a write whose entry could not be
 * stored is answered with an error.
 */
@Injectable()
export class AuditTrail implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Audit');
  private waiting: Waiting[] = [];
  private flushing?: Promise<void>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: AuditRepository,
  ) {}

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
    this.flushing ??= this.flush();
    return stored;
  }

  /** Requests are drained before shutdown; entries still on their way are written before the pool closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.flushing;
  }

  private async flush(): Promise<void> {
    // Started from `record`, synchronously: let the requests answered in this turn of the event loop join.
    await Promise.resolve();
    try {
      while (this.waiting.length > 0) {
        const group = this.waiting.splice(0, MOST_PER_INSERT);
        try {
          await this.repository.insert(group.map((waiting) => waiting.entry));
          for (const waiting of group) waiting.resolve();
        } catch (error) {
          this.logger.error(`${group.length} audit entr${group.length === 1 ? 'y' : 'ies'} could not be stored: ${String(error)}`);
          for (const waiting of group) waiting.reject(error);
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }
}
