/**
 * What the stack floor does per request (bench/floor/*-server.ts), the same on either framework: one of
 * the service's statements through a `pg` pool, with the parameters the service would pass. Nothing else.
 */
import pg from 'pg';
import { loadServiceStatements, RAW_WRITE_ORIGIN, SERVICE_SETTINGS } from '../rows/service-statements.js';

export interface ObjectBody {
  type: string;
  keys: { type: string; value: string }[];
  context: unknown;
}

export interface TaskBody {
  taskID: string;
  result: unknown;
}

export interface TakenTask {
  id: string;
  params: { objectKeys: unknown };
}

function argument(name: string): string {
  const index = process.argv.indexOf(name);
  if (index < 0 || index + 1 >= process.argv.length) throw new Error(`floor server: ${name} is required`);
  return process.argv[index + 1];
}

/** The pool from `--database-url` and `--pool-size` (the service's own pool size). */
export const pool = new pg.Pool({ connectionString: argument('--database-url'), max: Number(argument('--pool-size')) });

/** The service build's own statements (`--service-dir`), run under the names the service prepares them by. */
const statements = await loadServiceStatements(argument('--service-dir'));
const { OBJECT_STATEMENTS, findHitsParameters, WRITE_PARAMETERS } = statements.objects;
const { TASK_STATEMENTS } = statements.tasks;
const { taskMaxDeliveries, taskLeaseSeconds } = SERVICE_SETTINGS;

/**
 * The statements of a single add of an identical re-send or a new object, as ObjectsService.add runs them
 * (prepared under the service's names): the key pre-check, then, when no object owns the keys, the
 * autocommitted insert. Whether the object is stored afterwards; the bench sends nothing else (a changed
 * object would be an update, which the floor does not do).
 */
export async function add(collectionId: number, body: ObjectBody): Promise<boolean> {
  const context = JSON.stringify(body.context);
  const none = { at: null, ttlSeconds: null };
  const { rowCount } = await pool.query({ ...OBJECT_STATEMENTS.findHits, values: findHitsParameters(collectionId, body.keys, context, none) });
  if (rowCount !== 0) return true;
  const inserted = await pool.query({
    ...OBJECT_STATEMENTS.insert,
    values: WRITE_PARAMETERS.insert.values({
      collectionId,
      type: body.type,
      keys: JSON.stringify(body.keys),
      context,
      expiresAt: none.at,
      ttlSeconds: none.ttlSeconds,
      // A native add naming no marking: the collection's defaultTLP, CLEAR.
      tlp: 0,
      ...RAW_WRITE_ORIGIN,
    }),
  });
  return inserted.rowCount === 1;
}

/** The service's claim statement. */
export async function take(limit: number): Promise<TakenTask[]> {
  const { rows } = await pool.query<{ exhausted: boolean; id: string; objectKeys: unknown }>(
    TASK_STATEMENTS.take,
    TASK_STATEMENTS.takeParameters(limit, taskMaxDeliveries, taskLeaseSeconds),
  );
  return rows.filter((row) => !row.exhausted).map((row) => ({ id: row.id, params: { objectKeys: row.objectKeys } }));
}

/** The service's completion UPDATE: whether the task was open for it. */
export async function complete(body: TaskBody): Promise<boolean> {
  const { rowCount } = await pool.query(TASK_STATEMENTS.complete, TASK_STATEMENTS.completeParameters(body.taskID, taskMaxDeliveries, body.result));
  return rowCount === 1;
}

/** Prints the port for the bench (`LISTENING <port>`). */
export function announce(address: ReturnType<import('node:net').Server['address']>): void {
  process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
}
