/**
 * Every advisory lock key the service takes, in one place: two uses of one number exclude each other by
 * accident (the pruner once shared the migrations' number). A new lock takes the next free number here;
 * `advisory-locks.spec.ts` checks that every exported key is distinct.
 *
 * PostgreSQL keeps two key spaces apart: a one-key lock (`pg_advisory_lock(bigint)`) and a two-key lock
 * (`pg_advisory_lock(int, int)`) never conflict, even with equal numbers. A two-key lock here is a
 * *class* (its first key) over ids (the second key, e.g. a collection id); classes are still numbered in the
 * same range as one-key locks, so a number here names one lock whichever form takes it.
 */

/** One-key: held while an administrator key is created at startup (one bootstrap across instances). */
export const ADMIN_KEY_LOCK = 7_240_001;

/** One-key, session-level: held while migrations run (one migrator across processes). */
export const MIGRATIONS_LOCK = 7_240_002;

/** One-key: held by a numbering pass of the change feed (any instance), and by the pruner (same rows). */
export const SEQUENCER_LOCK = 7_240_012;

/** Two-key class: the collection writer locks, `(WRITER_LOCK_CLASS, collection id)`, shared or exclusive. */
export const WRITER_LOCK_CLASS = 7_240_013;

/** One-key: held by the one instance running the expiry job. */
export const EXPIRY_LOCK = 7_240_014;

/** One-key, session-level: held by the one instance sweeping unrecorded blobs from file storage. */
export const SWEEP_LOCK = 7_240_015;

/**
 * One-key: held by the one instance pruning the change feed. It was 7_240_002, the migrations' number, so a
 * pruner and a migrator waited for each other. Instances of both versions side by side during an upgrade
 * may prune at once; that is harmless, as both then wait for SEQUENCER_LOCK.
 */
export const PRUNE_LOCK = 7_240_016;

/** One-key, session-level: held by the one instance rolling up and pruning sightings. */
export const ROLLUP_LOCK = 7_240_031;

/** One-key: held while a collection's name or TAXII view aliases are chosen (unique among TAXII collections together). */
export const TAXII_ALIAS_LOCK = 7_240_040;
