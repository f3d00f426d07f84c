const MiB = 1024 * 1024;

/**
 * How much work each row does. The full scale is sized to finish the whole suite in well under
 * 10 minutes on 2 cores; --quick shrinks data and durations so every row runs in about a minute
 * in total (it proves the suite works; its numbers mean nothing).
 */
export interface Scale {
  quick: boolean;
  /** Concurrent clients of the request/response rows (1, 2, 3, 9). */
  connections: number;
  /** Alternating service/baseline rounds of row 3 (object add). */
  rounds: number;
  /** Alternating rounds and measured seconds per side per round of rows 1, 2 and 9 (short rounds, many alternations). */
  cheapRounds: number;
  cheapSeconds: number;
  /** Measured seconds per side per round for row 3 (object add). */
  objectAddSeconds: number;
  /** Untimed warm-up seconds per side. */
  warmupSeconds: number;
  /** Size of the seeded collection and change feed (rows 4 and 5). */
  feedItems: number;
  pageLimit: number;
  /** Concurrent readers walking the whole feed or listing; each walks it `walks` times per round. */
  readers: number;
  walks: number;
  /** Context size of added objects (row 3). */
  contextBytes: number;
  /** Row 3d: objects per side that the updates cycle through. */
  updateObjects: number;
  /** Row 6. */
  tasks: number;
  executors: number;
  takeLimit: number;
  /** Row 7a: `directFiles` files of `directFileBytes`, `directConnections` at a time. */
  directFileBytes: number;
  directFiles: number;
  directConnections: number;
  /** Row 7b: one file of `sessionFileBytes` through parts of `partBytes`. */
  sessionFileBytes: number;
  partBytes: number;
  /** Row 8: the row-7b file read `downloadPasses` times in ranges of `rangeBytes`. */
  rangeBytes: number;
  downloadPasses: number;
  downloadConnections: number;
  /** Row 10: batches of `batchItems` new objects, `batchClients` at a time, for `bulkSeconds` per side per round. */
  batchItems: number;
  batchClients: number;
  bulkSeconds: number;
  /** Row 11: `lookupObjects` objects seeded over `lookupCollections` collections, `lookupKeys` keys per lookup. */
  lookupObjects: number;
  lookupCollections: number;
  lookupKeys: number;
  /** Row 12: `networkAddresses` IPv4 addresses seeded in one collection, spread over 10.0.0.0/8. */
  networkAddresses: number;
  /** Row 16: objects seeded in the exported collection (each export lists all of them). */
  exportObjects: number;
  /** Row 17: indicators in one imported text (and objects in the baseline's batch). */
  importIndicators: number;
}

export const FULL: Scale = {
  quick: false,
  connections: 16,
  rounds: 2,
  cheapRounds: 4,
  cheapSeconds: 3,
  objectAddSeconds: 8,
  warmupSeconds: 2,
  feedItems: 100_000,
  pageLimit: 1000,
  readers: 4,
  walks: 1,
  contextBytes: 1024,
  updateObjects: 5000,
  tasks: 20_000,
  executors: 4,
  takeLimit: 100,
  directFileBytes: 50 * MiB,
  directFiles: 20,
  directConnections: 2,
  sessionFileBytes: 1024 * MiB,
  partBytes: 5 * MiB,
  rangeBytes: 50 * MiB,
  downloadPasses: 2,
  downloadConnections: 2,
  batchItems: 1000,
  batchClients: 2,
  bulkSeconds: 8,
  lookupObjects: 1_000_000,
  lookupCollections: 10,
  lookupKeys: 1000,
  networkAddresses: 1_000_000,
  exportObjects: 1_000_000,
  importIndicators: 10_000,
};

export const QUICK: Scale = {
  ...FULL,
  quick: true,
  rounds: 1,
  cheapRounds: 1,
  // A second per phase: on a loaded machine (a test suite beside it) a heavy request (a lookup of 1,000
  // keys, a page of 1,000 objects) took longer than half a second, and a phase ended with none finished.
  cheapSeconds: 1,
  objectAddSeconds: 1,
  warmupSeconds: 0.2,
  feedItems: 3_000,
  readers: 2,
  // The drain's protocol is the same at any size (each executor takes up to 100, completes each, takes
  // again until the queue is empty); 400 only made each of the eleven drains of rows 6 and 23 longer.
  tasks: 200,
  updateObjects: 300,
  directFileBytes: 2 * MiB,
  directFiles: 4,
  sessionFileBytes: 12 * MiB,
  rangeBytes: 5 * MiB,
  downloadPasses: 1,
  batchItems: 200,
  bulkSeconds: 1,
  lookupObjects: 5_000,
  networkAddresses: 5_000,
  exportObjects: 5_000,
  importIndicators: 500,
};
