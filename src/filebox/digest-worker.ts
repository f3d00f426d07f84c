import { Worker } from 'node:worker_threads';

/**
 * The worker's whole program: keep the four hashes of decisions §10 per stream id, hash each chunk it is
 * sent, acknowledge it, and answer a stream's digests when sent its end. Inline (eval) so that it runs the
 * same from the build output and from the TypeScript sources under test.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const streams = new Map();
parentPort.on('message', ({ id, chunk, end }) => {
  let hashes = streams.get(id);
  if (!hashes) {
    hashes = ['md5', 'sha1', 'sha256', 'sha512'].map((name) => createHash(name));
    streams.set(id, hashes);
  }
  if (end) {
    streams.delete(id);
    parentPort.postMessage({ id, digests: hashes.map((hash) => hash.digest()) });
    return;
  }
  if (chunk === undefined) {
    streams.delete(id);
    return;
  }
  const bytes = new Uint8Array(chunk);
  for (const hash of hashes) hash.update(bytes);
  parentPort.postMessage({ id, hashed: bytes.byteLength });
});
`;

/** Chunks of one stream in flight beyond this make `update` wait: the worker never queues more per stream. */
const MAX_IN_FLIGHT_BYTES = 4 * 1024 * 1024;

export interface Digests {
  md5: Buffer;
  sha1: Buffer;
  sha256: Buffer;
  sha512: Buffer;
}

interface StreamState {
  inFlight: number;
  resume?: () => void;
  finished?: { resolve: (digests: Digests) => void; reject: (error: Error) => void };
}

/**
 * One worker thread, shared by every upload of the process, that hashes content off the event loop (four
 * digests were a third of the upload path's CPU) and so puts uploads on a second core. One shared worker
 * keeps memory flat: a worker per upload cost an isolate each.
 */
class DigestPool {
  private worker?: Worker;
  private readonly streams = new Map<number, StreamState>();
  private nextId = 1;

  open(): number {
    const id = this.nextId++;
    this.streams.set(id, { inFlight: 0 });
    return id;
  }

  async update(id: number, chunk: Buffer): Promise<void> {
    const state = this.state(id);
    // Copy exactly the chunk's bytes (a Buffer may be a view into a larger pool) and hand the copy over.
    const copy = chunk.buffer.slice(chunk.byteOffset, chunk.byteOffset + chunk.byteLength) as ArrayBuffer;
    state.inFlight += copy.byteLength;
    this.ensureWorker().postMessage({ id, chunk: copy }, [copy]);
    if (state.inFlight > MAX_IN_FLIGHT_BYTES) await new Promise<void>((resolve) => (state.resume = resolve));
    this.state(id); // throws if the worker failed meanwhile
  }

  digests(id: number): Promise<Digests> {
    const state = this.state(id);
    return new Promise((resolve, reject) => {
      state.finished = { resolve, reject };
      this.ensureWorker().postMessage({ id, end: true });
    });
  }

  /** Forgets an abandoned stream. */
  discard(id: number): void {
    if (this.streams.delete(id)) this.worker?.postMessage({ id });
  }

  private state(id: number): StreamState {
    const state = this.streams.get(id);
    if (!state) throw new Error('the digest worker failed');
    return state;
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    // Idle, it must not keep the process alive.
    worker.unref();
    worker.on('message', (message: { id: number; hashed?: number; digests?: Uint8Array[] }) => {
      const state = this.streams.get(message.id);
      if (!state) return;
      if (message.hashed !== undefined) {
        state.inFlight -= message.hashed;
        if (state.inFlight <= MAX_IN_FLIGHT_BYTES / 2) wake(state);
      } else if (message.digests) {
        this.streams.delete(message.id);
        const [md5, sha1, sha256, sha512] = message.digests.map((digest) => Buffer.from(digest));
        state.finished?.resolve({ md5, sha1, sha256, sha512 });
      }
    });
    const fail = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      // Every stream it held is lost: fail them all; the next stream starts a new worker.
      for (const state of this.streams.values()) {
        state.finished?.reject(error);
        wake(state);
      }
      this.streams.clear();
    };
    worker.on('error', fail);
    worker.on('exit', () => fail(new Error('the digest worker stopped')));
    this.worker = worker;
    return worker;
  }
}

function wake(state: StreamState): void {
  const resume = state.resume;
  state.resume = undefined;
  resume?.();
}

const pool = new DigestPool();

/** The digests of one stream's content, computed on the shared digest worker. */
export class StreamDigests {
  private readonly id = pool.open();

  /** Resolves at once, or once the worker has caught up when too much of this stream is in flight. */
  update(chunk: Buffer): Promise<void> {
    return pool.update(this.id, chunk);
  }

  /** The digests of everything sent. */
  digests(): Promise<Digests> {
    return pool.digests(this.id);
  }

  /** For an abandoned stream. */
  discard(): void {
    pool.discard(this.id);
  }
}
