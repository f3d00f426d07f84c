import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request, Response } from 'express';
import { DataSource, EntityManager } from 'typeorm';
import { DomainEvents } from '../common/events/domain-events.js';
import { readMultipart } from '../common/http/multipart.js';
import { setTag } from '../common/http/security-headers.js';
import { Metrics } from '../common/metrics/metrics.js';
import { isUuid } from '../common/validation/uuid.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ContentMeter, type ContentDigests } from './content-meter.js';
import { StreamDigests } from './digest-worker.js';
import type { FileRefView } from './dto/file.dto.js';
import { FileboxErrors } from './filebox.errors.js';
import { FilesRepository } from './files.repository.js';
import { resolveRange } from './range.js';
import { sendRange } from './send-range.js';
import { BufferPool } from './storage/buffer-pool.js';
import { FILE_STORAGE, type FileStorage, type RangeReader } from './storage/file-storage.js';
import { openParts } from './storage/part-reader.js';
import { rangeStream } from './storage/range-stream.js';
import { discardUnrecorded } from './unrecorded-blob.js';

interface StoredFile {
  id: string;
  name: string | null;
  size: number;
  sha256: Buffer;
  sha512: Buffer;
  /** A session file's part blobs (each `part_size` bytes but the last); null: the one blob keyed by `id`. */
  part_size: number | null;
  part_keys: string[] | null;
}

/** How a file's content is laid out in storage (see the FileboxFileParts migration). */
export interface PartLayout {
  partSize: number;
  keys: string[];
}

/** Download chunks: 1 MiB reads halved the CPU per MiB of bench row 8 against 64 KiB. */
const DOWNLOAD_CHUNK_BYTES = 1024 * 1024;
/** Idle download buffers kept: the rings of a few concurrent downloads (4 buffers each, see send-range.ts). */
const IDLE_DOWNLOAD_BUFFERS = 16;

@Injectable()
export class FilesService {
  private readonly logger = new Logger(FilesService.name);
  private readonly downloadBuffers = new BufferPool(DOWNLOAD_CHUNK_BYTES, IDLE_DOWNLOAD_BUFFERS);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly repository: FilesRepository,
    @Inject(FILE_STORAGE) private readonly storage: FileStorage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly events: DomainEvents,
    private readonly metrics: Metrics,
  ) {}

  /** For other modules (insight task parameters and deduplication): the file's SHA-256 (hex), null when no such file exists. */
  async sha256Of(fileId: string): Promise<string | null> {
    if (!isUuid(fileId)) return null;
    return (await this.repository.sha256Hex(fileId)) ?? null;
  }

  /** A hashing meter that fails with 413 as soon as the configured largest file size is crossed. */
  meter(digests = new StreamDigests()): ContentMeter {
    const max = this.config.fileboxMaxFileBytes;
    return new ContentMeter({ limit: max, overLimit: () => FileboxErrors.tooLarge(max), digests });
  }

  /** Readiness (extensions §6): the storage answers. */
  async checkStorage(): Promise<void> {
    try {
      await this.storage.check();
    } catch (error) {
      this.logger.warn(`readiness: ${this.storage.description} does not answer: ${String(error)}`);
      throw FileboxErrors.storageUnavailable();
    }
  }

  /** decisions §10 direct upload: one file part `file`, streamed to storage; nothing stays behind on failure. */
  async upload(request: Request): Promise<FileRefView> {
    const fileId = randomUUID();
    let stored: { name: string | null; digests: ContentDigests } | undefined;
    try {
      await readMultipart(request, 1, async (part) => {
        if (part.name !== 'file' || !part.isFile) {
          throw FileboxErrors.expectedOneFile();
        }
        const meter = this.meter();
        await this.storage.put(fileId, part.content, [meter]);
        stored = { name: storedName(part.filename), digests: await meter.digests() };
      });
      if (!stored) throw FileboxErrors.expectedOneFile();
      if (stored.digests.size === 0) throw FileboxErrors.emptyFile();
      await this.record(this.dataSource.manager, fileId, stored.name, stored.digests);
      this.metrics.uploadedBytes.inc(stored.digests.size);
    } catch (error) {
      if (stored) await discardUnrecorded(this.storage, fileId, error);
      throw error;
    }
    this.announceStored(fileId, stored.name, stored.digests);
    return { fileID: fileId };
  }

  /** After the commit that recorded a new file (direct upload or session completion): its domain event. */
  announceStored(fileId: string, name: string | null, digests: ContentDigests): void {
    this.events.emit('filebox.file.stored', { fileID: fileId, name, size: digests.size, sha256: digests.sha256.toString('hex') });
  }

  /**
   * Inserts the metadata of content already in storage: the blob keyed by `fileId`, or (session
   * completion) the part blobs of `parts`. The file exists, for every instance, from this commit on.
   */
  async record(manager: EntityManager, fileId: string, name: string | null, digests: ContentDigests, parts?: PartLayout): Promise<void> {
    await this.repository.insert(manager, fileId, name, digests, parts);
  }

  /** Bytes `start..end` of content laid out as `parts` (or the blob `fileId`), as a stream. */
  content(fileId: string, parts: PartLayout | undefined, start: number, end: number): Readable {
    return rangeStream(this.openContent(fileId, parts, start, end));
  }

  /** Bytes `start..end` of content laid out as `parts` (or the blob `fileId`), read only over that range. */
  private openContent(fileId: string, parts: PartLayout | undefined, start: number, end: number): Promise<RangeReader> {
    return parts ? openParts(this.storage, parts.keys, parts.partSize, start, end) : this.storage.openRange(fileId, start, end);
  }

  /** HEAD: the representation headers and `Content-Length` = the file size, no body. */
  async head(fileId: string, response: Response): Promise<void> {
    const file = await this.find(fileId);
    setRepresentationHeaders(response, file);
    response.status(200).setHeader('Content-Length', String(file.size));
    response.end();
  }

  /**
   * GET: the whole file (200) or one range (206), streamed from storage with backpressure. The content is
   * opened before any header is written, so that a blob that cannot be read is a logged 500, not a 2xx
   * cut short. A storage failure mid-stream rejects: the filter logs it and cuts the connection.
   */
  async download(fileId: string, range: string | undefined, response: Response): Promise<void> {
    const file = await this.find(fileId);
    const span = range === undefined ? { start: 0, end: file.size - 1 } : resolveRange(range, file.size);
    const layout = file.part_size === null ? undefined : { partSize: file.part_size, keys: file.part_keys! };
    const content = await this.openContent(file.id, layout, span.start, span.end);
    setRepresentationHeaders(response, file);
    if (range !== undefined) {
      response.status(206).setHeader('Content-Range', `bytes ${span.start}-${span.end}/${file.size}`);
    } else {
      response.status(200);
    }
    response.setHeader('Content-Length', String(span.end - span.start + 1));
    // Counted as each chunk is handed to the response, so the counter has moved before the client holds
    // the last byte (a scrape right after a download sees it).
    await sendRange(content, response, this.downloadBuffers, (bytes) => this.metrics.downloadedBytes.inc(bytes));
  }

  /** A file's name, size and SHA-256 (the web console's file page); 422 FileNotFound like a download. */
  async describe(fileId: string): Promise<{ fileID: string; name: string | null; size: number; sha256: string }> {
    const file = await this.find(fileId);
    return { fileID: file.id, name: file.name, size: file.size, sha256: file.sha256.toString('hex') };
  }

  private async find(fileId: string): Promise<StoredFile> {
    if (!isUuid(fileId)) throw FileboxErrors.fileNotFound();
    const row = await this.repository.find(fileId);
    if (row === undefined) throw FileboxErrors.fileNotFound();
    return { ...row, size: Number(row.size) };
  }
}

/**
 * The name kept with a direct upload: busboy already keeps only the last path segment; control characters
 * go (a NUL cannot be stored in PostgreSQL text, and none belongs in a file name).
 */
function storedName(filename: string | undefined): string | null {
  const name = (filename ?? '').replace(/[\u0000-\u001f\u007f]/g, '');
  return name === '' ? null : name;
}

function setRepresentationHeaders(response: Response, file: StoredFile): void {
  response.setHeader('Content-Type', 'application/octet-stream');
  response.setHeader('Accept-Ranges', 'bytes');
  // Files never change: the content digest is a strong tag.
  setTag(response, `"${file.sha256.toString('hex')}"`);
  response.setHeader('Repr-Digest', `sha-256=:${file.sha256.toString('base64')}:, sha-512=:${file.sha512.toString('base64')}:`);
  if (file.name) response.setHeader('Content-Disposition', `attachment; filename*=UTF-8''${rfc5987(file.name)}`);
}

/** RFC 5987 value encoding: percent-encode everything but attr-char. */
function rfc5987(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
