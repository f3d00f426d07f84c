import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { PRUNE_LOCK, SEQUENCER_LOCK } from '../database/advisory-locks.js';

/** The SQL of the change records' retention: the feed's pruned position and history's deletions. */
@Injectable()
export class ChangeRetentionRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * The feed's retention, then history's. The feed: per collection, pruned_seq moves to the position
   * before the first record younger than `feedDays` (the feed answers CursorOutOfRange below it, as if
   * those records were gone). Cutting at a sequence number keeps the feed a gap-free suffix, so "cursor <
   * pruned_seq" is exactly "a change it needs is out of the feed"; cutting before the first young record
   * (not after the last old one) never takes a young record out with old ones numbered after it.
   * pruned_seq never moves back: two overlapping runs (two instances) may commit in either order, and the
   * one with the older snapshot and lower cut must not undo the other's mark (its UPDATE re-checks the
   * condition on the row's latest version once it holds it).
   * History: up to `batchSize` of the oldest records older than `historyDays` (never younger than the
   * feed's retention) and at or below their collection's pruned_seq, i.e. out of the feed already, are
   * deleted. Returns how many were.
   */
  async prune(feedDays: number, historyDays: number, batchSize: number): Promise<number | undefined> {
    return this.dataSource.transaction(async (manager) => {
      // One pruner at a time across instances: two concurrent runs would lock collections in different
      // orders (a deadlock) and do the same work twice. A run that finds the lock taken simply skips.
      const [{ locked }]: { locked: boolean }[] = await manager.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [PRUNE_LOCK]);
      if (!locked) return undefined;
      // Pruning moves pruned_seq on the collection rows the sequencer moves last_seq on; one after the
      // other, their multi-row updates cannot lock those rows in opposite orders (a deadlock).
      await manager.query('SELECT pg_advisory_xact_lock($1)', [SEQUENCER_LOCK]);
      // The first young record after pruned_seq: a walk of (collection_id, seq) from there, as long as the
      // records that aged out since the last run (none left: every numbered record is old).
      await manager.query(
        `UPDATE intel_collection c SET pruned_seq = GREATEST(c.pruned_seq, cut.seq)
           FROM (SELECT k.id, COALESCE((SELECT ch.seq - 1 FROM intel_change ch
                                         WHERE ch.collection_id = k.id AND ch.seq > k.pruned_seq
                                           AND ch.created_at >= now() - make_interval(days => $1::int)
                                         ORDER BY ch.seq LIMIT 1), k.last_seq) AS seq
                   FROM intel_collection k) cut
          WHERE c.id = cut.id AND cut.seq > c.pruned_seq`,
        [feedDays],
      );
      // Oldest first by the created_at index, in short transactions however long the backlog.
      const rows: { removed: number }[] = await manager.query(
        `WITH removed AS (
           DELETE FROM intel_change ch
            WHERE ch.id IN (SELECT x.id FROM intel_change x JOIN intel_collection c ON c.id = x.collection_id
                             WHERE x.created_at < now() - make_interval(days => GREATEST($1::int, $2::int)) AND x.seq <= c.pruned_seq
                             ORDER BY x.created_at LIMIT $3)
           RETURNING 1
         )
         SELECT count(*)::int AS removed FROM removed`,
        [feedDays, historyDays, batchSize],
      );
      return rows[0].removed;
    });
  }
}
