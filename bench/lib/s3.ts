import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import { Readable } from 'node:stream';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { ChildServer } from './processes.js';

/**
 * `--storage s3`: the S3-compatible server both the service and the raw-SDK baselines of rows 7 and 8 write
 * to, and the baselines' client, configured as the service configures its own (path-style, no trailing
 * checksums, keep-alive).
 */
export class BenchS3 {
  readonly client: S3Client;

  constructor(
    readonly server: ChildServer,
    readonly bucket: string,
  ) {
    this.client = new S3Client({
      endpoint: server.url,
      forcePathStyle: true,
      region: 'us-east-1',
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { httpAgent: new Agent({ keepAlive: true, maxSockets: 64 }) },
    });
  }

  /** The service's environment for this bucket (objects under `files/`). */
  serviceEnv(): Record<string, string> {
    return {
      FILEBOX_STORAGE: `s3://${this.bucket}/files`,
      AWS_ENDPOINT_URL: this.server.url,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_REGION: 'us-east-1',
    };
  }

  /** One object of known length (what the service does with a session part). */
  async put(content: Buffer): Promise<string> {
    const key = `baseline/${randomUUID()}`;
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: content, ContentLength: content.length }));
    return key;
  }

  /** Content of unknown length through a multipart upload (what the service does with a direct upload). */
  async upload(content: Readable): Promise<string> {
    const key = `baseline/${randomUUID()}`;
    await new Upload({ client: this.client, params: { Bucket: this.bucket, Key: key, Body: content }, queueSize: 2 }).done();
    return key;
  }

  /** Reads `bytes=start-end` of `key` to the end, discarding it; resolves to the bytes read. */
  async readRange(key: string, start: number, end: number): Promise<number> {
    const response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: `bytes=${start}-${end}` }));
    let bytes = 0;
    for await (const chunk of response.Body as Readable) bytes += (chunk as Buffer).length;
    return bytes;
  }

  async stop(): Promise<void> {
    this.client.destroy();
    await this.server.stop();
  }
}
