/**
 * What the stack floor does per request (bench/floor/*-server.ts), the same on either framework: one of
 * the service's statements through a `pg` pool, with the parameters the service would pass. Nothing else.
 */
import pg from 'pg';
import {
  DELIVERY_LIMIT_ERROR,
  REPORT_UNFENCED,
  TAKE_ANY,
  loadObjectStatements,
  loadTaskStatements,
  TASK_LEASE_SECONDS,
  TASK_MAX_DELIVERIES,
} from '../rows/service-sql.js';

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
const statements = await loadObjectStatements(argument('--service-dir'));
const taskStatements = await loadTaskStatements(argument('--service-dir'));

/**
 * The statements of a single add of an identical re-send or a new object, as ObjectsService.add runs them
 * (prepared under the service's names): the key pre-check, then, when no object owns the keys, the
 * autocommitted insert. Whether the object is stored afterwards; the bench sends nothing else (a changed
 * object would be an update, which the floor does not do).
 */
export async function add(collectionId: number, body: ObjectBody): Promise<boolean> {
  const context = JSON.stringify(body.context);
  const { rowCount } = await pool.query({
    ...statements.findHits,
    values: [collectionId, body.keys.map((key) => key.type), body.keys.map((key) => key.value), context, true, null],
  });
  if (rowCount !== 0) return true;
  const inserted = await pool.query({ ...statements.insert, values: [collectionId, body.type, JSON.stringify(body.keys), context, null, null] });
  return inserted.rowCount === 1;
}

/** The service's claim statement. */
export async function take(limit: number): Promise<TakenTask[]> {
  const { rows } = await pool.query<{ exhausted: boolean; id: string; objectKeys: unknown }>(taskStatements.take, [
    limit,
    TASK_MAX_DELIVERIES,
    TASK_LEASE_SECONDS,
    DELIVERY_LIMIT_ERROR.code,
    DELIVERY_LIMIT_ERROR.message,
    ...TAKE_ANY,
  ]);
  return rows.filter((row) => !row.exhausted).map((row) => ({ id: row.id, params: { objectKeys: row.objectKeys } }));
}

/** The service's completion UPDATE: whether the task was open for it. */
export async function complete(body: TaskBody): Promise<boolean> {
  const { rowCount } = await pool.query(taskStatements.complete, [body.taskID, TASK_MAX_DELIVERIES, JSON.stringify(body.result), ...REPORT_UNFENCED]);
  return rowCount === 1;
}

/** Prints the port for the bench (`LISTENING <port>`). */
export function announce(address: ReturnType<import('node:net').Server['address']>): void {
  process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
}
