import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { PassThrough, Readable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error.js';
import { LOWER_CASE_UUID_PATTERN } from '../../common/validation/uuid.js';
import { APP_CONFIG, ConfigError, type AppConfig, type FileboxStorageConfig } from '../../config/app-config.js';
import { BufferPool } from './buffer-pool.js';
import type { FileStorage, RangeReader } from './file-storage.js';
import { uploadInParts } from './s3-multipart-upload.js';

type S3Config = Extract<FileboxStorageConfig, { kind: 's3' }>;

const MiB = 1024 * 1024;
/** S3's smallest multipart part and its largest part count. */
const MIN_MULTIPART_PART = 5 * MiB;
const MAX_MULTIPART_PARTS = 10_000;
/** Part buffers kept between uploads (one per concurrent direct upload of unknown length). */
const IDLE_PART_BUFFERS = 4;

const KEY = LOWER_CASE_UUID_PATTERN;

/**
 * Bounded waits, so that an endpoint that is down or stalls gives an error, never a hanging request:
 * connecting, and any silence on an open connection (also mid-body).
 */
const CONNECT_TIMEOUT_MS = 5_000;
const IDLE_TIMEOUT_MS = 60_000;

/** Errors that say "the storage cannot serve now" (503), as opposed to a bug or a missing blob (500). */
const UNAVAILABLE = new Set([
  'NoSuchBucket',
  'AccessDenied',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'ExpiredToken',
  'InvalidToken',
  'SlowDown',
  'ServiceUnavailable',
  'InternalError',
  'RequestTimeout',
  'TimeoutError',
  'RequestTimeTooSkewed',
]);
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH']);

/**
 * extensions §6 backend: blobs are objects `<prefix><key>` of one bucket, shared by every instance. A PUT
 * of an object is atomic in S3 (it appears only once complete), which gives the all-or-nothing write of
 * `FileStorage`; content of unknown length goes through a multipart upload that S3 likewise assembles
 * only on completion. Endpoint, region and credentials: the SDK's standard variables (see AppConfig).
 */
@Injectable()
export class S3Storage implements FileStorage, OnModuleInit, OnModuleDestroy {
  readonly description: string;
  private readonly logger = new Logger('S3Storage');
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  /** Parts of multipart uploads: S3's minimum size, or larger when the largest file needs more than 10,000 parts. */
  private readonly partBuffers: BufferPool;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const s3 = config.fileboxStorage as S3Config;
    this.bucket = s3.bucket;
    this.prefix = s3.prefix;
    this.description = `s3://${s3.bucket}/${s3.prefix}${s3.endpoint ? ` at ${s3.endpoint}` : ''}`;
    const partBytes = Math.max(MIN_MULTIPART_PART, Math.ceil(config.fileboxMaxFileBytes / MAX_MULTIPART_PARTS));
    this.partBuffers = new BufferPool(partBytes, IDLE_PART_BUFFERS);
    this.client = createS3Client(s3, this.logger);
  }

  /** Start-up fails with one line when the bucket cannot be reached (extensions §6). */
  async onModuleInit(): Promise<void> {
    try {
      await this.check();
    } catch (error) {
      throw new ConfigError(`FILEBOX_STORAGE ${this.description} is not usable: ${describe(error)}`);
    }
  }

  onModuleDestroy(): void {
    this.client.destroy();
  }

  async put(key: string, source: Readable, through: readonly Transform[], length?: number): Promise<void> {
    const objectKey = this.objectKey(key);
    const body = new PassThrough();
    const abort = new AbortController();
    // The content flows through the meters into `body`, which the SDK streams to S3. The first failure on
    // either side stops the other: a stream error aborts the request, a storage error destroys the stream.
    const flowing = pipeline([source, ...through, body]).catch((error: unknown) => {
      abort.abort();
      throw error;
    });
    const params = { Bucket: this.bucket, Key: objectKey, Body: body, ContentType: 'application/octet-stream' };
    const sending = (
      length !== undefined
        ? this.client.send(new PutObjectCommand({ ...params, ContentLength: length }), { abortSignal: abort.signal })
        : uploadInParts(this.client, params, this.partBuffers, abort.signal)
    ).catch((error: unknown) => {
      body.destroy();
      source.destroy();
      throw error;
    });
    const [streamed, stored] = await Promise.allSettled([flowing, sending]);
    if (streamed.status === 'fulfilled' && stored.status === 'fulfilled') return;
    // S3 never shows a partial object; some compatible servers do: make sure none stays readable.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: objectKey })).catch(() => undefined);
    // The cause is the side that failed first; the other one fails only because it was stopped: aborted,
    // or handed the stream's own error. A storage error must not hide behind the stream's premature end
    // (a 503 shown as a 500); the content's own refusals (413…) always win.
    const storageFailed =
      stored.status === 'rejected' &&
      (streamed.status === 'fulfilled' ||
        (!(streamed.reason instanceof ApiError) && stored.reason !== streamed.reason && (stored.reason as { name?: string }).name !== 'AbortError'));
    if (!storageFailed) throw (streamed as PromiseRejectedResult).reason;
    throw this.failure('PutObject', key, stored.reason);
  }

  async openRange(key: string, start: number, end: number): Promise<RangeReader> {
    const abort = new AbortController();
    const range = `bytes=${start}-${end}`;
    let response;
    try {
      response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), Range: range }), { abortSignal: abort.signal });
    } catch (error) {
      throw this.failure('GetObject', key, error);
    }
    const body = response.Body as Readable;
    // Never pass on other bytes than asked for, whatever a compatible server answers (one emulator answers
    // `bytes=0-0` with the whole object): the range must start where asked, and is cut at its length.
    if (response.ContentRange !== undefined && !response.ContentRange.startsWith(`bytes ${start}-`)) {
      body.destroy();
      throw this.failure('GetObject', key, new Error(`the storage answered ${response.ContentRange} to Range: ${range}`));
    }
    return new BodyRange(body, end - start + 1, range, abort, (error) => this.failure('GetObject', key, error));
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
    } catch (error) {
      throw this.failure('DeleteObject', key, error);
    }
  }

  async *listBlobs(before: Date): AsyncIterable<string[]> {
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix, ContinuationToken: token }));
      const keys = (page.Contents ?? [])
        .filter((object) => object.LastModified !== undefined && object.LastModified < before)
        .map((object) => (object.Key ?? '').slice(this.prefix.length))
        .filter((key) => KEY.test(key));
      if (keys.length > 0) yield keys;
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  /**
   * Multipart uploads left incomplete by a crash (only direct uploads of unknown length use them). A server
   * that does not list multipart uploads (some S3 emulators) is skipped; a bucket lifecycle rule
   * `AbortIncompleteMultipartUpload` does the same job on AWS (docs/s3.md).
   */
  async sweepTemporaries(before: Date): Promise<number> {
    let removed = 0;
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    do {
      let page;
      try {
        page = await this.client.send(
          new ListMultipartUploadsCommand({
            Bucket: this.bucket,
            Prefix: this.prefix,
            KeyMarker: keyMarker,
            UploadIdMarker: uploadIdMarker,
          }),
        );
      } catch (error) {
        if ((error as { name?: string }).name === 'NotImplemented') return removed;
        throw error;
      }
      for (const upload of page.Uploads ?? []) {
        if (!upload.Initiated || upload.Initiated >= before) continue;
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: upload.Key, UploadId: upload.UploadId }));
        removed++;
      }
      keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
      uploadIdMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
    } while (keyMarker);
    return removed;
  }

  async check(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (error) {
      // HEAD answers carry no error body: name the two usual causes from the status.
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 404) throw new Error(`the bucket ${this.bucket} does not exist`);
      if (status === 403) throw new Error(`access to the bucket ${this.bucket} is denied (credentials, policy)`);
      throw error;
    }
  }

  /** The only way an object key is formed: from a validated server-generated key. */
  private objectKey(key: string): string {
    if (!KEY.test(key)) throw new Error(`invalid storage key ${JSON.stringify(key)}`);
    return `${this.prefix}${key}`;
  }

  /** One log line naming the cause; the client gets a 503 when the storage is unreachable, else a 500. */
  private failure(operation: string, key: string, error: unknown): Error {
    if (error instanceof ApiError) return error;
    const cause = describe(error);
    this.logger.error(`${operation} ${this.prefix}${key} in bucket ${this.bucket} failed: ${cause}`);
    if (isUnavailable(error)) return new ApiError('ServiceUnavailable', `the file storage is unavailable (${cause})`);
    return error instanceof Error ? error : new Error(cause);
  }
}

function createS3Client(s3: S3Config, logger: Logger): S3Client {
  const agentOptions = { keepAlive: true, maxSockets: 256 };
  return new S3Client({
    region: s3.region,
    endpoint: s3.endpoint,
    // MinIO, Ceph RGW and emulators behind one host name need path-style addressing.
    forcePathStyle: s3.endpoint !== undefined,
    credentials: s3.credentials,
    // Checksums only where S3 requires them: the default (a trailing CRC in aws-chunked encoding) is not
    // understood by every S3-compatible server, and the service computes its own digests of the content.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
    requestHandler: {
      connectionTimeout: CONNECT_TIMEOUT_MS,
      requestTimeout: IDLE_TIMEOUT_MS,
      httpAgent: new HttpAgent(agentOptions),
      httpsAgent: new HttpsAgent(agentOptions),
    },
    // The SDK's own warnings (e.g. "a streaming request is not retried") are details of an error we log.
    logger: {
      debug: () => undefined,
      info: () => undefined,
      warn: (message: unknown) => logger.debug(String(message)),
      error: (message: unknown) => logger.debug(String(message)),
    },
  });
}

/**
 * The first `length` bytes of a GetObject body, copied into the caller's buffers (fewer is an error); the
 * body's own chunks are released as soon as they are copied.
 */
class BodyRange implements RangeReader {
  private readonly chunks: AsyncIterator<Buffer>;
  private pending: Buffer | undefined;
  private left: number;
  private closed = false;

  constructor(
    private readonly body: Readable,
    private readonly length: number,
    private readonly range: string,
    private readonly abort: AbortController,
    private readonly failure: (error: unknown) => Error,
  ) {
    this.left = length;
    this.chunks = (body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  }

  async read(buffer: Buffer): Promise<number> {
    let filled = 0;
    try {
      while (filled < buffer.length && this.left > 0) {
        let chunk = this.pending;
        this.pending = undefined;
        if (chunk === undefined) {
          const next = await this.chunks.next();
          if (next.done) throw new Error(`the storage sent ${this.length - this.left} of the ${this.length} bytes of Range: ${this.range}`);
          chunk = next.value;
        }
        const take = Math.min(chunk.length, buffer.length - filled, this.left);
        chunk.copy(buffer, filled, 0, take);
        filled += take;
        this.left -= take;
        if (take < chunk.length && this.left > 0) this.pending = chunk.subarray(take);
      }
    } catch (error) {
      if (this.closed) return 0;
      throw this.failure(error);
    }
    // The whole range is here: the rest of the body (if the server sent more) is not read.
    if (this.left === 0) await this.close();
    return filled;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.pending = undefined;
    this.abort.abort();
    this.body.destroy();
  }
}

function isUnavailable(error: unknown): boolean {
  const candidate = error as { name?: string; code?: string; $fault?: string; $metadata?: { httpStatusCode?: number } };
  if (NETWORK.has(candidate.code ?? '') || UNAVAILABLE.has(candidate.name ?? '') || UNAVAILABLE.has(candidate.code ?? '')) {
    return true;
  }
  const status = candidate.$metadata?.httpStatusCode;
  return (
    candidate.$fault === 'server' ||
    status === 503 ||
    status === 403 ||
    (status === undefined && candidate.name !== 'AbortError' && candidate.$metadata !== undefined)
  );
}

function describe(error: unknown): string {
  const candidate = error as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = candidate.$metadata?.httpStatusCode;
  const name = candidate.code && candidate.code !== candidate.name ? `${candidate.name} ${candidate.code}` : candidate.name;
  return `${name ?? 'Error'}${status ? ` (HTTP ${status})` : ''}: ${(candidate.message ?? String(error)).split('\n')[0]}`;
}
