import { randomUUID } from 'node:crypto';
import { constants, createWriteStream } from 'node:fs';
import { access, mkdir, open, opendir, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { LOWER_CASE_UUID_PATTERN } from '../../common/validation/uuid.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { FileboxErrors } from '../filebox.errors.js';
import type { FileStorage, RangeReader } from './file-storage.js';

const LIST_PAGE = 1000;

/** A full disk or an exhausted quota: the client learns it with 507, and the service keeps serving reads. */
const OUT_OF_SPACE = new Set(['ENOSPC', 'EDQUOT']);

const KEY = LOWER_CASE_UUID_PATTERN;

/**
 * decisions §10 default backend: blobs under `DATA_DIR/files/objects/<key>`, written under
 * `DATA_DIR/files/tmp/` and renamed into place only after the content is complete and fsynced (both
 * directories are on one file system, so the rename is atomic); the rename is fsynced before `put` returns.
 */
@Injectable()
export class LocalDiskStorage implements FileStorage, OnModuleInit {
  readonly description: string;
  private readonly objects: string;
  private readonly temporaries: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.objects = join(config.dataDir, 'files', 'objects');
    this.temporaries = join(config.dataDir, 'files', 'tmp');
    this.description = `local disk ${join(config.dataDir, 'files')}`;
  }

  async onModuleInit(): Promise<void> {
    await mkdir(this.objects, { recursive: true });
    await mkdir(this.temporaries, { recursive: true });
  }

  async put(key: string, source: Readable, through: readonly Transform[]): Promise<void> {
    const target = this.pathOf(key);
    const temporary = join(this.temporaries, `${randomUUID()}.tmp`);
    // Wired synchronously so that an early error of `source` is always observed; `flush` fsyncs before close.
    const sink = createWriteStream(temporary, { flags: 'wx', flush: true });
    try {
      await pipeline([source, ...through, sink]);
      await rename(temporary, target);
      await syncDirectory(this.objects);
    } catch (error) {
      // The descriptor may still be opening: remove the temporary only once it is closed.
      if (!sink.closed) await new Promise<void>((resolve) => sink.once('close', () => resolve()));
      await rm(temporary, { force: true });
      throw OUT_OF_SPACE.has((error as NodeJS.ErrnoException).code ?? '') ? FileboxErrors.outOfSpace() : error;
    }
  }

  async openRange(key: string, start: number, end: number): Promise<RangeReader> {
    return new FileRange(await open(this.pathOf(key), 'r'), start, end);
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async *listBlobs(before: Date): AsyncIterable<string[]> {
    let page: string[] = [];
    // opendir streams the directory: millions of blobs are never listed into memory at once.
    for await (const entry of await opendir(this.objects)) {
      const name = entry.name;
      if (!KEY.test(name)) continue;
      const info = await stat(join(this.objects, name)).catch(() => undefined);
      if (!info || info.mtimeMs >= before.getTime()) continue;
      page.push(name);
      if (page.length === LIST_PAGE) {
        yield page;
        page = [];
      }
    }
    if (page.length > 0) yield page;
  }

  /** Temporaries of a process that died mid-upload; a live upload touches its temporary continually. */
  async sweepTemporaries(before: Date): Promise<number> {
    let removed = 0;
    for (const name of await readdir(this.temporaries)) {
      const path = join(this.temporaries, name);
      const info = await stat(path).catch(() => undefined);
      if (info && info.mtimeMs < before.getTime()) {
        await rm(path, { force: true });
        removed++;
      }
    }
    return removed;
  }

  async check(): Promise<void> {
    await access(this.objects, constants.R_OK | constants.W_OK);
    await access(this.temporaries, constants.R_OK | constants.W_OK);
  }

  /** The only way a path is formed: from a validated server-generated key. */
  private pathOf(key: string): string {
    if (!KEY.test(key)) throw new Error(`invalid storage key ${JSON.stringify(key)}`);
    return join(this.objects, key);
  }
}

/**
 * Makes a rename into `dir` durable: the blob's content is fsynced, but until its directory is too, a power
 * loss right after the upload was acknowledged can undo the rename (measured at about 0.2 ms on ext4).
 */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Positioned reads of one open blob, straight into the caller's buffer. */
class FileRange implements RangeReader {
  constructor(
    private readonly handle: FileHandle,
    private position: number,
    private readonly end: number,
  ) {}

  async read(buffer: Buffer): Promise<number> {
    const length = Math.min(buffer.length, this.end + 1 - this.position);
    if (length <= 0) return 0;
    const { bytesRead } = await this.handle.read(buffer, 0, length, this.position);
    if (bytesRead === 0) throw new Error(`the blob ends at byte ${this.position}, before the end of the range (${this.end})`);
    this.position += bytesRead;
    return bytesRead;
  }

  /** A FileHandle closes once its pending read is done, and closing it again is a no-op. */
  close(): Promise<void> {
    return this.handle.close();
  }
}
