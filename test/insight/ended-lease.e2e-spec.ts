import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { endedWithLeaseSql, hasEndedWithLease, isLastLease, lastLeaseSql, LEASE_EXPIRED, type LeaseStanding } from '../../src/insight/ended-lease.js';
import { createDatabase } from '../support/test-app.js';

/** TASK_MAX_DELIVERIES of the cases. */
const MAX_DELIVERIES = 3;

/** A row of insight_task as far as the rule reads it; `lease` in seconds from now (null: no lease). */
interface Case {
  state: string;
  lease: number | null;
  deliveries: number;
  maxAttempts: number | null;
  cancelRequested: boolean;
}

/** Every combination that matters: each state, no / running / run-out lease, below, at and over each limit. */
function cases(): Case[] {
  const all: Case[] = [];
  for (const state of ['Pending', 'Completed', 'Failed'])
    for (const lease of [null, -60, 60])
      for (const deliveries of [0, 1, 2, 3, 4])
        for (const maxAttempts of [null, 1, 4])
          for (const cancelRequested of [false, true]) all.push({ state, lease, deliveries, maxAttempts, cancelRequested });
  return all;
}

describe('the ended-lease rule: its SQL fragment and its TypeScript predicate agree', () => {
  let db: pg.Client;

  beforeAll(async () => {
    // An empty database is enough: the fragments read a VALUES list named like insight_task.
    db = new pg.Client({ connectionString: await createDatabase() });
    await db.connect();
  });
  afterAll(() => db?.end());

  it('on every case, with the lease judged by the database clock', async () => {
    const table = cases();
    const { rows } = await db.query<LeaseStanding & { ended: boolean | null; last: boolean | null }>(
      `SELECT state, ${LEASE_EXPIRED} AS "leaseExpired", deliveries, max_attempts AS "maxAttempts",
              cancel_requested AS "cancelRequested", ${endedWithLeaseSql('$2')} AS ended, ${lastLeaseSql('$2')} AS last
         FROM jsonb_to_recordset($1::jsonb) AS c(i int, state text, lease float8, deliveries int, max_attempts smallint,
                                                 cancel_requested boolean)
        CROSS JOIN LATERAL (SELECT now() + make_interval(secs => c.lease) AS lease_expires_at) l
        ORDER BY i`,
      [
        JSON.stringify(
          table.map((c, i) => ({
            i,
            state: c.state,
            lease: c.lease,
            deliveries: c.deliveries,
            max_attempts: c.maxAttempts,
            cancel_requested: c.cancelRequested,
          })),
        ),
        MAX_DELIVERIES,
      ],
    );
    expect(rows).toHaveLength(table.length);
    const disagreements = rows.filter((row) => row.ended !== hasEndedWithLease(row, MAX_DELIVERIES) || row.last !== isLastLease(row, MAX_DELIVERIES));
    expect(disagreements).toEqual([]);
    // The table covers both answers, so agreement is not trivially "never".
    expect(rows.filter((row) => row.ended).length).toBeGreaterThan(0);
    expect(rows.filter((row) => !row.ended).length).toBeGreaterThan(0);
  });
});
