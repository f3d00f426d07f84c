import { describe, expect, it } from '@jest/globals';
import { serviceForSuite } from './suite-service.js';
import { pause } from './workload.js';

const CLIENTS = 12;

/**
 * The audit guarantee under the worst crash: an answer is released only after the statement that carries its
 * entry committed, so a client that saw a success can always find the entry, however the process ended.
 */
describe('kill -9 of the service under concurrent audited writes', () => {
  const suite = serviceForSuite('ids-fault-audit-');

  it('every acknowledged write (and key generation) has its entry after the restart', async () => {
    const admin = { 'X-Api-Key': suite.service.adminKey, 'Content-Type': 'application/json' };
    const post = (path: string, body: unknown, requestId: string) =>
      fetch(`${suite.service.url}${path}`, { method: 'POST', headers: { ...admin, 'X-Request-Id': requestId }, body: JSON.stringify(body) });
    expect((await post('/intel/schemas', { schemaID: 'plain', type: 'object' }, 'setup-1')).status).toBe(201);
    expect((await post('/intel/collections', { name: 'audited', schemaID: 'plain' }, 'setup-2')).status).toBe(201);

    const acknowledged: string[] = [];
    let running = true;
    const client = async (index: number) => {
      for (let n = 0; running; n++) {
        const requestId = `crash-${index}-${n}`;
        // Every fourth request generates a key: the auth area's writes are in flight at the kill too.
        const answer =
          n % 4 === 3
            ? post('/auth/keys', { permissions: [] }, requestId)
            : post(
                '/intel/collections/audited/objects',
                { type: 'DomainName', keys: [{ type: 'DomainName', value: `d${index}-${n}.example` }], context: {} },
                requestId,
              );
        const status = await answer.then((response) => response.status).catch(() => 0);
        if (status === 201 || status === 204) acknowledged.push(requestId);
        else if (status === 0) await pause(20); // the service is down: the next attempt goes to the restarted one
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, index) => client(index));
    try {
      for (let attempt = 0; attempt < 600 && acknowledged.length < 150; attempt++) await pause(20);
      expect(acknowledged.length).toBeGreaterThanOrEqual(150);
      await suite.service.kill();
      const beforeRestart = acknowledged.length;
      await suite.service.restart();
      for (let attempt = 0; attempt < 600 && acknowledged.length < beforeRestart + 50; attempt++) await pause(20);
    } finally {
      running = false;
      await Promise.all(clients);
    }
    const rows = await suite.db.query<{ request_id: string; status: number }>('SELECT request_id, status FROM audit_entry WHERE request_id = ANY($1)', [
      acknowledged,
    ]);
    const stored = new Map(rows.rows.map((row) => [row.request_id, row.status]));
    expect(acknowledged.filter((requestId) => !stored.has(requestId))).toEqual([]);
    expect([...new Set(stored.values())].sort()).toEqual(expect.arrayContaining([201, 204]));
    // Each request has at most one entry (nothing is recorded twice on the way to the answer).
    const duplicates = await suite.db.query(`SELECT request_id FROM audit_entry GROUP BY request_id HAVING count(*) > 1`);
    expect(duplicates.rows).toEqual([]);
  });
});
