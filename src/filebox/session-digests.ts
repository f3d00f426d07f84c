import { Injectable } from '@nestjs/common';
import { DigestChainStore, StreamDigests } from './digest-worker.js';

/** A session's running hashes in this process: parts 1..through, hashed in order, from these blobs. */
interface Chain {
  through: number;
  keys: string[];
  /** Bumped on every change, so that a part hashed from an older state cannot extend a newer one. */
  version: number;
  /** The digest worker generation that holds the hashes. */
  generation: number;
}

/** A part's hasher and the chain state it continues (`version` 0: a fresh start at part 1). */
export interface PartHasher {
  digests: StreamDigests;
  version: number;
}

/** Sessions whose running hashes a process keeps; the least recently used beyond this are dropped. */
const MAX_CHAINS = 1000;

/**
 * decisions §10 digests of a session file without a second read when its parts arrive in order: part 1
 * starts four hashes, each next part continues them (on the digest worker) as it streams to storage, and
 * completion finishes them. Parts that arrive out of order, or at another instance, are not hashed on the
 * way; completion then reads from storage only what the chain does not cover (from the first part it
 * lacks, or everything). The chain lives in this process only: the blob keys it covers are checked against
 * the database at completion, so it can never describe content other than the parts being completed.
 */
@Injectable()
export class SessionDigests {
  private readonly chains = new Map<string, Chain>();
  private nextVersion = 1;

  /** The hasher for part `number`: a fresh one for part 1, the chain's continuation for the next part, else none. */
  forPart(sessionId: string, number: number): PartHasher | undefined {
    if (number === 1) return { digests: new StreamDigests(), version: 0 };
    const chain = this.live(sessionId);
    if (chain?.through !== number - 1) return undefined;
    return { digests: new StreamDigests(sessionId), version: chain.version };
  }

  /** Part `number`, stored as blob `key`, is committed: extend (or restart) the chain with its hasher. */
  async committed(sessionId: string, number: number, key: string, hasher: PartHasher | undefined): Promise<void> {
    const chain = this.live(sessionId);
    const extends_ = hasher && (hasher.version === 0 ? number === 1 : chain?.version === hasher.version);
    if (!hasher || !extends_) {
      hasher?.digests.discard();
      // A part the chain already covers was replaced: the chain no longer describes the content.
      if (chain && number <= chain.through) this.forget(sessionId);
      return;
    }
    await hasher.digests.park();
    hasher.digests.promote(sessionId);
    this.chains.delete(sessionId);
    this.chains.set(sessionId, {
      through: number,
      keys: number === 1 ? [key] : [...chain!.keys, key],
      version: this.nextVersion++,
      generation: DigestChainStore.generation,
    });
    if (this.chains.size > MAX_CHAINS) this.forget(this.chains.keys().next().value!);
  }

  /**
   * For completion over the part blobs `keys` (in order): a hasher that has already seen the first `hashed`
   * parts. The chain stays until `forget` (a completion that fails keeps it).
   */
  resume(sessionId: string, keys: readonly string[]): { digests: StreamDigests; hashed: number } {
    const chain = this.live(sessionId);
    if (chain && chain.through <= keys.length && chain.keys.every((key, index) => keys[index] === key)) {
      return { digests: new StreamDigests(sessionId), hashed: chain.through };
    }
    return { digests: new StreamDigests(), hashed: 0 };
  }

  forget(sessionId: string): void {
    if (this.chains.delete(sessionId)) DigestChainStore.drop(sessionId);
  }

  private live(sessionId: string): Chain | undefined {
    const chain = this.chains.get(sessionId);
    if (chain && chain.generation !== DigestChainStore.generation) {
      this.chains.delete(sessionId);
      return undefined;
    }
    return chain;
  }
}
