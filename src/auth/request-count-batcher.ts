import type { DataSource } from 'typeorm';
import { PreparedStatement } from '../common/sql/prepared-statement.js';

/**
 * Counts one request against one limit. The row lock of the upsert serialises concurrent requests, and
 * the guarded update refuses the increment once the count has reached the limit, so no request is lost
 * or let through.
 */
export const COUNT_ONE = `
  INSERT INTO auth_request_count (limit_id, window_start, count)
  VALUES ($1, (now() AT TIME ZONE 'utc')::date, 1)
  ON CONFLICT (limit_id, window_start)
  DO UPDATE SET count = auth_request_count.count + 1 WHERE auth_request_count.count < $2
  RETURNING count`;

/**
 * Counts `$2` requests against one limit at once, all or none: under the same row lock, the guarded
 * update adds the whole batch only if the count stays within the limit. The caller never passes more
 * than the limit, so the inserting branch cannot overshoot either.
 */
const COUNT_MANY = `
  INSERT INTO auth_request_count (limit_id, window_start, count)
  VALUES ($1, (now() AT TIME ZONE 'utc')::date, $2)
  ON CONFLICT (limit_id, window_start)
  DO UPDATE SET count = auth_request_count.count + $2 WHERE auth_request_count.count + $2 <= $3
  RETURNING count`;

const COUNT_ONE_PREPARED = new PreparedStatement<{ count: number }>('auth_count_request', COUNT_ONE);
const COUNT_MANY_PREPARED = new PreparedStatement<{ count: number }>('auth_count_requests', COUNT_MANY);

interface Waiter {
  resolve: (count: number | null) => void;
  reject: (error: unknown) => void;
}

interface Queue {
  limit: number;
  waiters: Waiter[];
  running: boolean;
}

/** The most requests that one statement counts (bounds the latency of the last waiter of a batch). */
const MAX_BATCH = 512;

/**
 * Coalesces the requests of one limit that arrive while a count of that limit is in flight into one
 * statement (group commit for a hot counter row): a busy key then costs one upsert, one row lock and one
 * commit per batch instead of per request, while every count stays in PostgreSQL and exact across
 * instances. A batch that would pass the limit is not counted at all and falls back to counting its
 * requests one by one, which lets exactly the remaining ones through. Nothing is reserved ahead of use,
 * so an instance never holds allowance that another one is refused.
 */
export class RequestCountBatcher {
  private readonly queues = new Map<number, Queue>();

  constructor(private readonly dataSource: DataSource) {}

  /** The count after this request, or null when the limit is exhausted (the request is not counted). */
  count(limitId: number, limit: number): Promise<number | null> {
    let queue = this.queues.get(limitId);
    if (!queue) {
      queue = { limit, waiters: [], running: false };
      this.queues.set(limitId, queue);
    }
    queue.limit = Math.min(queue.limit, limit);
    const counted = new Promise<number | null>((resolve, reject) => queue.waiters.push({ resolve, reject }));
    if (!queue.running) void this.drain(limitId, queue);
    return counted;
  }

  private async drain(limitId: number, queue: Queue): Promise<void> {
    queue.running = true;
    while (queue.waiters.length > 0) {
      const batch = queue.waiters.splice(0, MAX_BATCH);
      const { limit } = queue;
      try {
        await this.countBatch(limitId, limit, batch);
      } catch (error) {
        for (const waiter of batch) waiter.reject(error);
      }
    }
    queue.running = false;
    this.queues.delete(limitId);
  }

  private async countBatch(limitId: number, limit: number, batch: Waiter[]): Promise<void> {
    if (batch.length > 1 && batch.length <= limit) {
      const rows = await COUNT_MANY_PREPARED.run(this.dataSource, [limitId, batch.length, limit]);
      if (rows.length === 1) {
        const first = rows[0].count - batch.length;
        batch.forEach((waiter, index) => waiter.resolve(first + index + 1));
        return;
      }
    }
    // Near the limit (or alone): one by one, in arrival order, so exactly the remaining ones pass.
    let exhausted = false;
    for (const waiter of batch) {
      const rows: { count: number }[] = exhausted ? [] : await COUNT_ONE_PREPARED.run(this.dataSource, [limitId, limit]);
      exhausted = rows.length === 0;
      waiter.resolve(exhausted ? null : rows[0].count);
    }
  }
}
