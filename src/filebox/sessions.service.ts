import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request } from 'express';
import { DataSource, EntityManager } from 'typeorm';
import { readMultipart, readValue, type FormPart } from '../common/http/multipart.js';
import { schedulePeriodicJob } from '../common/jobs/periodic-job.js';
import { Metrics } from '../common/metrics/metrics.js';
import { isUuid } from '../common/validation/uuid.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ContentMeter, type ContentDigests } from './content-meter.js';
import type { FileRefView } from './dto/file.dto.js';
import type { CreateSessionDto, SessionRefView } from './dto/session.dto.js';
import { FileboxErrors } from './filebox.errors.js';
import { FilesService } from './files.service.js';
import { SessionDigests, type PartHasher } from './session-digests.js';
import { FILE_STORAGE, type FileStorage } from './storage/file-storage.js';
import { discardUnrecorded } from './unrecorded-blob.js';
import { UploadSessionsRepository, type SessionRow } from './upload-sessions.repository.js';

/** Part numbers are stored as PostgreSQL integers. */
const MAX_PART_NUMBER = 2_147_483_647;

/** The three fields of a part form, each checked as soon as it is read. */
interface PartForm {
  number?: number;
  declaredSize?: number;
  storedSize?: number;
}

@Injectable()
export class SessionsService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(SessionsService.name);
  private stopSweep: (() => void) | undefined;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sessions: UploadSessionsRepository,
    @Inject(FILE_STORAGE) private readonly storage: FileStorage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly files: FilesService,
    private readonly digests: SessionDigests,
    private readonly metrics: Metrics,
  ) {}

  onModuleInit(): void {
    this.stopSweep = schedulePeriodicJob('FileboxSessionSweep', this.config.jobIntervalSeconds, async () => {
      await this.sweepIdleSessions();
    });
  }

  onModuleDestroy(): void {
    this.stopSweep?.();
  }

  async create(form: CreateSessionDto): Promise<SessionRefView> {
    const id = randomUUID();
    await this.sessions.insert(id, form.partSize);
    return { sessionID: id };
  }

  /**
   * decisions §10 part upload. The content goes to a fresh blob (hashed on the way when it continues the
   * session's parts in order, see SessionDigests); only once every check passed does the part row point at
   * it (replacing an earlier upload of the number atomically), and the old blob goes.
   */
  async uploadPart(sessionId: string, request: Request): Promise<void> {
    const partSize = (await this.openSession(sessionId)).part_size;
    const key = randomUUID();
    const form: PartForm = {};
    let hasher: PartHasher | undefined;
    try {
      const handle = async (part: FormPart): Promise<void> => {
        switch (part.name) {
          case 'number':
            if (form.number !== undefined) throw duplicate(part.name);
            form.number = parseDecimal(await readValue(part, 16), 'number', 1, MAX_PART_NUMBER);
            return;
          case 'partSize':
            if (form.declaredSize !== undefined) throw duplicate(part.name);
            form.declaredSize = parseDecimal(await readValue(part, 16), 'partSize', 1, partSize);
            return;
          case 'filePart': {
            if (form.storedSize !== undefined) throw duplicate(part.name);
            // The SDK sends number and partSize first: a part that cannot fit is refused before its content is
            // read, and its content streams to storage with its length known and is hashed in order.
            const declared = form.declaredSize;
            if (form.number !== undefined && declared !== undefined) {
              this.checkImpliedSize(form.number, declared, partSize);
            }
            if (form.number !== undefined) hasher = this.digests.forPart(sessionId, form.number);
            const limit = declared ?? partSize;
            const meter = new ContentMeter({
              limit,
              overLimit: () => sizeMismatch(limit),
              digests: hasher?.digests,
              exact: declared === undefined ? undefined : (size) => sizeMismatch(declared, size),
            });
            await this.storage.put(key, part.content, [meter], declared);
            form.storedSize = meter.size;
            return;
          }
          default:
            throw FileboxErrors.invalidField(`unexpected field ${JSON.stringify(part.name ?? '')}: a part form holds number, partSize and filePart`);
        }
      };
      // busboy hands over each field as it reaches it, before the handler of the one before has read its
      // value: the fields are handled one after another, so that the file part knows number and partSize.
      let earlier: Promise<void> = Promise.resolve();
      await readMultipart(request, 3, (part) => (earlier = earlier.catch(() => undefined).then(() => handle(part))));
      const { number, declaredSize, storedSize } = form;
      if (number === undefined || declaredSize === undefined || storedSize === undefined) {
        throw FileboxErrors.invalidField('a part form must hold the fields number, partSize and filePart');
      }
      // Also catches the SDK's empty replay of a part after a 401 (wire-contract §2.2).
      if (storedSize !== declaredSize) throw sizeMismatch(declaredSize, storedSize);
      this.checkImpliedSize(number, storedSize, partSize);
      await this.commitPart(sessionId, number, storedSize, key);
      this.metrics.uploadedBytes.inc(storedSize);
    } catch (error) {
      hasher?.digests.discard();
      if (form.storedSize !== undefined) await discardUnrecorded(this.storage, key, error);
      throw error;
    }
    // The part is stored: a failure to keep its hashes only means completion reads it once more.
    await this.digests.committed(sessionId, form.number!, key, hasher).catch((error: unknown) => {
      this.logger.warn(`session ${sessionId}: running digests dropped: ${String(error)}`);
      this.digests.forget(sessionId);
    });
  }

  /**
   * decisions §10 completion: parts 1..N without gaps, all but the last exactly `partSize`. The file is the
   * part blobs themselves (extensions §6): nothing is copied; storage is read only for digests the parts
   * did not get on the way in. The session row stays locked until the file is recorded, so a concurrent
   * completion waits and then answers the same file, and no part changes meanwhile.
   */
  async complete(sessionId: string): Promise<FileRefView> {
    const fileId = randomUUID();
    let digests: ContentDigests | undefined;
    const result = await this.dataSource.transaction(async (manager) => {
      const session = await this.findSession(manager, sessionId, true);
      if (session.file_id !== null) return session.file_id;
      const parts = await this.sessions.parts(manager, sessionId);
      if (parts.length === 0) throw FileboxErrors.missingPart(1);
      parts.forEach((part, index) => {
        if (part.number !== index + 1) throw FileboxErrors.missingPart(index + 1);
        if (index < parts.length - 1 && part.size !== session.part_size) {
          throw FileboxErrors.invalidPart(part.number, part.size, session.part_size);
        }
      });
      const layout = { partSize: session.part_size, keys: parts.map((part) => part.storage_key) };
      const size = parts.reduce((sum, part) => sum + part.size, 0);
      const resumed = this.digests.resume(sessionId, layout.keys);
      if (resumed.hashed < parts.length) {
        // Only what the running hashes lack: from the first part they do not cover to the end.
        const rest = this.files.content(fileId, layout, resumed.hashed * session.part_size, size - 1);
        await pipeline(rest, this.files.meter(resumed.digests), discardAll());
      }
      digests = { size, ...(await resumed.digests.digests()) };
      await this.files.record(manager, fileId, null, digests, layout);
      // The blobs now belong to the file.
      await this.sessions.complete(manager, sessionId, fileId);
      return fileId;
    });
    this.digests.forget(sessionId);
    if (result === fileId && digests) this.files.announceStored(fileId, null, digests);
    return { fileID: result };
  }

  /** Removes sessions idle for UPLOAD_SESSION_TTL_HOURS with their parts; run by the job, public for tests. */
  async sweepIdleSessions(): Promise<number> {
    const row = await this.sessions.deleteIdle(this.config.uploadSessionTtlHours);
    await this.discard(row.keys);
    return row.sessions;
  }

  /** The session (malformed id → 404), locked until the transaction ends when `lock` is set. */
  private async findSession(manager: EntityManager, sessionId: string, lock: boolean): Promise<SessionRow> {
    if (!isUuid(sessionId)) throw FileboxErrors.sessionNotFound();
    const row = await this.sessions.find(manager, sessionId, lock);
    if (row === undefined) throw FileboxErrors.sessionNotFound();
    return row;
  }

  /** A session that still takes parts. */
  private async openSession(sessionId: string): Promise<SessionRow> {
    const session = await this.findSession(this.dataSource.manager, sessionId, false);
    if (session.file_id !== null) throw FileboxErrors.sessionCompleted();
    return session;
  }

  /**
   * decisions §10 session cap. Parts 1..number-1 must each be `partSize` bytes, so this part implies a file
   * at least this large; as no part exceeds `partSize`, this also bounds the sum of all stored parts.
   */
  private checkImpliedSize(number: number, size: number, partSize: number): void {
    const max = this.config.fileboxMaxFileBytes;
    if ((number - 1) * partSize + size > max) throw FileboxErrors.tooLarge(max);
  }

  private async commitPart(sessionId: string, number: number, size: number, key: string): Promise<void> {
    const replaced = await this.dataSource.transaction(async (manager) => {
      // The session row is locked first (a part cannot slip in while the session is being completed). The
      // upsert below runs after the lock is held, so its snapshot sees a concurrent upload of the same number
      // that committed first, and retires that blob.
      const session = await this.sessions.touch(manager, sessionId);
      if (!session) throw FileboxErrors.sessionNotFound();
      if (session.file_id !== null) throw FileboxErrors.sessionCompleted();
      return this.sessions.upsertPart(manager, sessionId, number, size, key);
    });
    if (replaced !== null) await this.discard([replaced]);
  }

  /** Blobs no row refers to any more; a failure to remove one must not fail the request that retired it. */
  private async discard(keys: readonly string[]): Promise<void> {
    const results = await Promise.allSettled(keys.map((key) => this.storage.delete(key)));
    for (const result of results) {
      if (result.status === 'rejected') this.logger.warn(`could not remove a retired blob: ${String(result.reason)}`);
    }
  }
}

function parseDecimal(raw: string, field: string, min: number, max: number): number {
  const text = raw.trim();
  const value = /^\d{1,16}$/.test(text) ? Number(text) : NaN;
  if (!(value >= min && value <= max)) {
    throw FileboxErrors.invalidField(`${field} must be a whole number from ${min} to ${max}`);
  }
  return value;
}

function duplicate(field: string): Error {
  return FileboxErrors.invalidField(`the field ${field} appears more than once`);
}

function sizeMismatch(declared: number, actual?: number): Error {
  return FileboxErrors.invalidField(
    actual === undefined
      ? `filePart holds more than the ${declared} bytes allowed (the declared partSize, at most the session partSize)`
      : `filePart holds ${actual} bytes but partSize declares ${declared}`,
  );
}

/** The end of a pipeline that only needs its content to flow (hashing). */
function discardAll(): Writable {
  return new Writable({ write: (_chunk, _encoding, callback) => callback() });
}
