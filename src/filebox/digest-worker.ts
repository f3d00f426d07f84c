import { Worker } from 'node:worker_threads';

/**
 * The worker's whole program: hash every chunk it is sent with the four algorithms of decisions §10,
 * acknowledge each chunk, and answer the digests when sent `null`. Inline (eval) so that it runs the
 * same from the build output and from the TypeScript sources under test.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const hashes = ['md5', 'sha1', 'sha256', 'sha512'].map((name) => createHash(name));
parentPort.on('message', (chunk) => {
  if (chunk === null) {
    parentPort.postMessage({ digests: hashes.map((hash) => hash.digest()) });
    return;
  }
  const bytes = new Uint8Array(chunk);
  for (const hash of hashes) hash.update(bytes);
  parentPort.postMessage({ hashed: bytes.byteLength });
});
`;

/** Chunks in flight beyond this make `update` wait: the worker never queues more than this much. */
const MAX_IN_FLIGHT_BYTES = 8 * 1024 * 1024;

export interface Digests {
  md5: Buffer;
  sha1: Buffer;
  sha256: Buffer;
  sha512: Buffer;
}

/**
 * Hashes a stream's content on another thread, so that the event loop only parses and writes (hashing
 * four digests was a third of the upload path's CPU) and uploads use a second core.
 */
export class DigestWorker {
  private readonly worker = new Worker(WORKER_SOURCE, { eval: true });
  private inFlight = 0;
  private resume?: () => void;
  private failure?: Error;
  private finished?: { resolve: (digests: Digests) => void; reject: (error: Error) => void };

  constructor() {
    // Every worker is ended by digests() or destroy(); none may keep the process alive meanwhile.
    this.worker.unref();
    this.worker.on('message', (message: { hashed?: number; digests?: Uint8Array[] }) => {
      if (message.hashed !== undefined) {
        this.inFlight -= message.hashed;
        if (this.inFlight <= MAX_IN_FLIGHT_BYTES / 2) this.wake();
      } else if (message.digests) {
        const [md5, sha1, sha256, sha512] = message.digests.map((digest) => Buffer.from(digest));
        this.finished?.resolve({ md5, sha1, sha256, sha512 });
        void this.worker.terminate();
      }
    });
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', () => this.fail(new Error('the digest worker stopped')));
  }

  /** Sends a copy of `chunk`; resolves at once, or once the worker has caught up when too much is in flight. */
  async update(chunk: Buffer): Promise<void> {
    if (this.failure) throw this.failure;
    // Copy exactly the chunk's bytes (a Buffer may be a view into a larger pool) and hand the copy over.
    const copy = chunk.buffer.slice(chunk.byteOffset, chunk.byteOffset + chunk.byteLength);
    this.inFlight += copy.byteLength;
    this.worker.postMessage(copy, [copy as ArrayBuffer]);
    if (this.inFlight > MAX_IN_FLIGHT_BYTES) {
      await new Promise<void>((resolve) => (this.resume = resolve));
      if (this.failure) throw this.failure;
    }
  }

  /** The digests of everything sent; the worker ends afterwards. */
  digests(): Promise<Digests> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.finished = { resolve, reject };
      this.worker.postMessage(null);
    });
  }

  /** For an abandoned stream. */
  destroy(): void {
    this.failure ??= new Error('digests abandoned');
    void this.worker.terminate();
  }

  private fail(error: Error): void {
    if (this.finished && !this.failure) {
      // Exit after delivering the digests is the normal end.
      if (error.message === 'the digest worker stopped') return;
    }
    this.failure ??= error;
    this.finished?.reject(error);
    this.wake();
  }

  private wake(): void {
    const resume = this.resume;
    this.resume = undefined;
    resume?.();
  }
}
