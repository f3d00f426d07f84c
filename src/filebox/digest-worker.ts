import { Worker } from 'node:worker_threads';

/**
 * The worker's whole program: keep the four hashes of decisions §10 per stream id, hash the first `length`
 * bytes of each slot it is sent and hand the slot back, and answer a stream's digests when sent its end.
 * Inline (eval) so that it runs the same from the build output and from the TypeScript sources under test.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const fresh = () => ['md5', 'sha1', 'sha256', 'sha512'].map((name) => createHash(name));
const streams = new Map();
// Running hashes of upload sessions, continued part after part (see DigestChains).
const chains = new Map();
parentPort.on('message', ({ id, slot, length, end, base, park, promote, chain }) => {
  if (chain !== undefined) {
    chains.delete(chain);
    return;
  }
  if (base !== undefined) {
    const from = chains.get(base);
    streams.set(id, from ? from.map((hash) => hash.copy()) : fresh());
    return;
  }
  if (promote !== undefined) {
    const hashes = streams.get(id);
    streams.delete(id);
    if (hashes) chains.set(promote, hashes);
    return;
  }
  let hashes = streams.get(id);
  if (!hashes) {
    hashes = fresh();
    streams.set(id, hashes);
  }
  if (park) {
    parentPort.postMessage({ id, parked: true });
    return;
  }
  if (end) {
    streams.delete(id);
    parentPort.postMessage({ id, digests: hashes.map((hash) => hash.digest()) });
    return;
  }
  if (slot === undefined) {
    streams.delete(id);
    return;
  }
  const bytes = new Uint8Array(slot, 0, length);
  for (const hash of hashes) hash.update(bytes);
  parentPort.postMessage({ id, slot }, [slot]);
});
`;

/**
 * Content travels in slots: chunks are copied into a 256 KiB slot, the full slot is transferred to the
 * worker (no copy) and transferred back once hashed, then reused. Steady uploads allocate nothing, and a
 * stream with too many slots at the worker waits, so memory stays bounded whatever the number of uploads.
 * 256 KiB rather than 1 MiB: the worker starts on a part sooner and ends sooner after its last byte (bench
 * row 7b, six interleaved pairs of `--rows 7`: 218-238 MiB/s, mean 227, against 204-224, mean 212).
 */
const SLOT_BYTES = 256 * 1024;
const MiB = 1024 * 1024;
/**
 * How far one stream's hashing may lag behind its storage: 6 MiB let a 5 MiB part be received and written
 * at the socket's pace while the worker hashes it, and finish hashing during the part's fsync, instead of
 * pausing the request whenever the worker is busy. Bench row 7b, interleaved runs of `--rows 7` (1 MiB
 * slots): 179-206 MiB/s (mean 195) with 6 MiB, 146-190 (mean 176) with 3 MiB (which had beaten 2, 158 to 172).
 */
const SLOTS_IN_FLIGHT_PER_STREAM = (6 * MiB) / SLOT_BYTES;
/**
 * All streams together: beyond it a stream waits even below its own limit, so the slots at the worker stay
 * within 64 MiB whatever the number of uploads (each upload also fills one slot of its own).
 */
const SLOTS_IN_FLIGHT = (64 * MiB) / SLOT_BYTES;
const SPARE_SLOTS = (8 * MiB) / SLOT_BYTES;

export interface Digests {
  md5: Buffer;
  sha1: Buffer;
  sha256: Buffer;
  sha512: Buffer;
}

interface StreamState {
  /** Slots at the worker. */
  inFlight: number;
  /** The slot being filled, and how far. */
  slot?: ArrayBuffer;
  filled: number;
  resume?: () => void;
  finished?: { resolve: (digests: Digests | undefined) => void; reject: (error: Error) => void };
}

/**
 * One worker thread, shared by every upload of the process, that hashes content off the event loop (four
 * digests were a third of the upload path's CPU) and so puts uploads on a second core. One shared worker
 * keeps memory flat: a worker per upload cost an isolate each. Besides one-off streams it keeps named
 * chains: hashes that a later stream continues from (a copy), for session parts hashed in order.
 */
class DigestPool {
  private worker?: Worker;
  private readonly streams = new Map<number, StreamState>();
  private readonly spare: ArrayBuffer[] = [];
  /** Slots at the worker, of every stream. */
  private inFlight = 0;
  /** Streams waiting only because of SLOTS_IN_FLIGHT, first come first served. */
  private readonly waiting: StreamState[] = [];
  private nextId = 1;
  /** Bumped when a worker dies: chains kept by an earlier worker are gone. */
  generation = 0;

  /** A new stream; with `base`, continuing from a copy of that chain's hashes. */
  open(base?: string): number {
    const id = this.nextId++;
    this.streams.set(id, { inFlight: 0, filled: 0 });
    if (base !== undefined) this.ensureWorker().postMessage({ id, base });
    return id;
  }

  async update(id: number, chunk: Buffer): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      const state = this.state(id);
      state.slot ??= this.spare.pop() ?? new ArrayBuffer(SLOT_BYTES);
      const copied = Math.min(chunk.length - offset, SLOT_BYTES - state.filled);
      new Uint8Array(state.slot, state.filled, copied).set(chunk.subarray(offset, offset + copied));
      state.filled += copied;
      offset += copied;
      if (state.filled === SLOT_BYTES) await this.send(id, state);
    }
  }

  /** The digests of everything sent (`park`: keep the hashes at the worker for `promote` instead). */
  async finish(id: number, park = false): Promise<Digests | undefined> {
    const state = this.state(id);
    if (state.filled > 0) await this.send(id, state);
    return new Promise((resolve, reject) => {
      state.finished = { resolve, reject };
      this.ensureWorker().postMessage(park ? { id, park: true } : { id, end: true });
    });
  }

  /** Makes a parked stream's hashes the chain `chain`. */
  promote(id: number, chain: string): void {
    this.streams.delete(id);
    this.worker?.postMessage({ id, promote: chain });
  }

  dropChain(chain: string): void {
    this.worker?.postMessage({ chain });
  }

  /** Forgets an abandoned (or parked, not promoted) stream. */
  discard(id: number): void {
    this.streams.delete(id);
    this.worker?.postMessage({ id });
  }

  /** Transfers the stream's slot to the worker; waits while the stream has too many slots there. */
  private async send(id: number, state: StreamState): Promise<void> {
    const slot = state.slot!;
    this.ensureWorker().postMessage({ id, slot, length: state.filled }, [slot]);
    state.slot = undefined;
    state.filled = 0;
    state.inFlight++;
    this.inFlight++;
    while (state.inFlight >= SLOTS_IN_FLIGHT_PER_STREAM || this.inFlight >= SLOTS_IN_FLIGHT) {
      if (state.inFlight < SLOTS_IN_FLIGHT_PER_STREAM) this.waiting.push(state);
      await new Promise<void>((resolve) => (state.resume = resolve));
      this.state(id); // throws if the worker failed meanwhile
    }
  }

  /** The longest-waiting stream, once the streams together are below SLOTS_IN_FLIGHT again. */
  private wakeWaiting(): void {
    while (this.inFlight < SLOTS_IN_FLIGHT && this.waiting.length > 0) {
      const state = this.waiting.shift()!;
      // One woken meanwhile by its own slot (or gone) needs nothing; it re-checks both limits anyway.
      if (state.resume) {
        wake(state);
        return;
      }
    }
  }

  private state(id: number): StreamState {
    const state = this.streams.get(id);
    if (!state) throw new Error('the digest worker failed');
    return state;
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    worker.on('message', (message: { id: number; slot?: ArrayBuffer; digests?: Uint8Array[]; parked?: boolean }) => {
      if (message.slot) {
        if (this.spare.length < SPARE_SLOTS) this.spare.push(message.slot);
        // Also a slot of a discarded stream: it counted against SLOTS_IN_FLIGHT until now.
        this.inFlight--;
        this.wakeWaiting();
      }
      const state = this.streams.get(message.id);
      if (!state) return;
      if (message.slot) {
        state.inFlight--;
        wake(state);
      } else if (message.digests || message.parked) {
        if (message.digests) this.streams.delete(message.id);
        state.finished?.resolve(message.digests && toDigests(message.digests));
      }
    });
    const fail = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.generation++;
      this.inFlight = 0;
      this.waiting.length = 0;
      // Every stream and chain it held is lost: fail them all; the next stream starts a new worker.
      for (const state of this.streams.values()) {
        state.finished?.reject(error);
        wake(state);
      }
      this.streams.clear();
    };
    worker.on('error', fail);
    worker.on('exit', () => fail(new Error('the digest worker stopped')));
    // Idle, it must not keep the process alive; after the listeners, as adding a 'message' listener refs it again.
    worker.unref();
    this.worker = worker;
    return worker;
  }
}

function toDigests(raw: Uint8Array[]): Digests {
  const [md5, sha1, sha256, sha512] = raw.map((digest) => Buffer.from(digest));
  return { md5, sha1, sha256, sha512 };
}

function wake(state: StreamState): void {
  const resume = state.resume;
  state.resume = undefined;
  resume?.();
}

const pool = new DigestPool();

/** The digests of one stream's content, computed on the shared digest worker. */
export class StreamDigests {
  private readonly id: number;

  /** With `base`, the stream continues the hashes of that chain (which stays as it is). */
  constructor(base?: string) {
    this.id = pool.open(base);
  }

  /** Resolves at once, or once the worker has caught up when too much of this stream is at the worker. */
  update(chunk: Buffer): Promise<void> {
    return pool.update(this.id, chunk);
  }

  /** The digests of everything sent. */
  async digests(): Promise<Digests> {
    return (await pool.finish(this.id))!;
  }

  /** Keeps the hashes at the worker, for `promote` or `discard`. */
  async park(): Promise<void> {
    await pool.finish(this.id, true);
  }

  /** Makes the parked hashes the chain `chain` (replacing it). */
  promote(chain: string): void {
    pool.promote(this.id, chain);
  }

  /** For an abandoned stream. */
  discard(): void {
    pool.discard(this.id);
  }
}

/** Chains kept at the digest worker: `generation` tells whether a chain made earlier can still exist. */
export const DigestChainStore = {
  get generation(): number {
    return pool.generation;
  },
  drop: (chain: string) => pool.dropChain(chain),
};
