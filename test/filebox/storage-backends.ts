import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** The storage backends every filebox behaviour is tested on (extensions §6). */
export const BACKENDS = ['local', 's3'] as const;
export type BackendName = (typeof BACKENDS)[number];

/** What a test may look at behind the API: the blobs (by key) and temporaries (`tmp/<name>`) in storage. */
export interface StorageProbe {
  entries(): Promise<string[]>;
  /** Removes a blob behind the service's back. */
  remove(key: string): Promise<void>;
}

export type FileboxApp = TestApp & { storage: StorageProbe; settings: Record<string, string> };

export interface Backend {
  name: BackendName;
  /** Boots the app on this backend: for S3, on a fresh bucket, or on the bucket of `sharing` (a second instance). */
  createApp(settings?: Record<string, string>, sharing?: FileboxApp): Promise<FileboxApp>;
  /** The S3 server's address (S3 only), for tests that speak to it directly. */
  readonly endpoint?: string;
  stop(): Promise<void>;
}

export function fileboxBackend(name: BackendName): Backend {
  return name === 'local' ? new LocalBackend() : new S3Backend();
}

class LocalBackend implements Backend {
  readonly name = 'local';

  async createApp(settings: Record<string, string> = {}, sharing?: FileboxApp): Promise<FileboxApp> {
    const t = await createTestApp(settings, sharing);
    const files = join(t.dataDir, 'files');
    const storage: StorageProbe = {
      entries: async () => [...(await readdir(join(files, 'objects'))), ...(await readdir(join(files, 'tmp'))).map((name) => `tmp/${name}`)],
      remove: (key) => rm(join(files, 'objects', key)),
    };
    return Object.assign(t, { storage, settings });
  }

  async stop(): Promise<void> {}
}

/**
 * A real S3-compatible server (s3rver, from npm) on the loopback, started on first use and stopped by
 * `stop`, with its data in a temporary directory. Objects go under a key prefix, as in a shared bucket.
 */
class S3Backend implements Backend {
  readonly name = 's3';
  endpoint?: string;
  private server?: S3rver;
  private directory?: string;
  private client?: S3Client;

  async createApp(settings: Record<string, string> = {}, sharing?: FileboxApp): Promise<FileboxApp> {
    await this.start();
    let storageSettings = sharing?.settings;
    if (!storageSettings) {
      const bucket = `ids-${randomBytes(6).toString('hex')}`;
      await this.client!.send(new CreateBucketCommand({ Bucket: bucket }));
      storageSettings = {
        FILEBOX_STORAGE: `s3://${bucket}/files`,
        AWS_ENDPOINT_URL: this.endpoint!,
        AWS_ACCESS_KEY_ID: 'S3RVER',
        AWS_SECRET_ACCESS_KEY: 'S3RVER',
        AWS_REGION: 'us-east-1',
      };
    }
    const bucket = /^s3:\/\/([^/]+)/.exec(storageSettings.FILEBOX_STORAGE)![1];
    const t = await createTestApp({ ...settings, ...storageSettings }, sharing);
    const storage: StorageProbe = {
      entries: async () => {
        const keys: string[] = [];
        let token: string | undefined;
        do {
          const page = await this.client!.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
          keys.push(...(page.Contents ?? []).map((object) => object.Key!.replace(/^files\//, '')));
          token = page.IsTruncated ? page.NextContinuationToken : undefined;
        } while (token);
        return keys;
      },
      remove: async (key) => {
        await this.client!.send(new DeleteObjectCommand({ Bucket: bucket, Key: `files/${key}` }));
      },
    };
    return Object.assign(t, { storage, settings: storageSettings });
  }

  /** Stops the server (again: nothing). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.client?.destroy();
    await server?.close();
    if (this.directory) await rm(this.directory, { recursive: true, force: true });
  }

  private async start(): Promise<void> {
    if (this.server) return;
    if (this.endpoint) throw new Error('this S3 backend was stopped');
    this.directory = await mkdtemp(join(tmpdir(), 'ids-s3-'));
    this.server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: this.directory });
    const { port } = await this.server.run();
    this.endpoint = `http://127.0.0.1:${port}`;
    this.client = new S3Client({
      endpoint: this.endpoint,
      forcePathStyle: true,
      region: 'us-east-1',
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
  }
}
