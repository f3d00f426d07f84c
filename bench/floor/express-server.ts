/**
 * The stack floor of rows 2, 3a, 3b, 3c and 6 (rows 2f, 3af, 3bf, 3cf, 6f) on bare Express 5 (`--floor express`), run as its
 * own process like the service: the least any service built on Express and `pg` does per request —
 * routing, the JSON body parser, one statement (bench/floor/work.ts), a JSON answer — and nothing else: no
 * framework on top, no authentication, validation, normalisation, schema check, log line or metrics. Its
 * ratio against a row's baseline is the highest that row can reach on Express in the same run. By default
 * the bench runs nest-server.ts instead: the same routes on bare NestJS, the service's own stack.
 *
 *   GET  /health/live                                → {"status":"ok"}, as the service (row 2)
 *   POST /intel/collections/<collection id>/objects  → the service's add statements (work.ts, add): 204
 *        when the object is stored (re-sent or new; anything else is 409, which fails the row)
 *   POST /insight/task-queue/executing-tasks         → the claim statement, the tasks as JSON
 *   POST /insight/task-queue/completed-tasks         → the completion UPDATE; 204, or 409 (fails the row)
 *
 * Usage: node express-server.js --database-url <url> --pool-size <n> --service-dir <service build>; prints `LISTENING <port>`.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { add, announce, complete, pool, take, type ObjectBody, type TaskBody } from './work.js';

const app = express();
// The service's two Express settings (src/configure-app.ts).
app.disable('x-powered-by');
app.set('etag', false);
app.use(express.json({ limit: '16mb' }));

app.get('/health/live', (_request, response) => {
  response.json({ status: 'ok' });
});
app.post('/intel/collections/:collection/objects', async (request: Request<{ collection: string }, unknown, ObjectBody>, response) => {
  response.status((await add(Number(request.params.collection), request.body)) ? 204 : 409).end();
});
app.post('/insight/task-queue/executing-tasks', async (request: Request<unknown, unknown, { limit: number }>, response) => {
  response.json(await take(request.body.limit));
});
app.post('/insight/task-queue/completed-tasks', async (request: Request<unknown, unknown, TaskBody>, response) => {
  response.status((await complete(request.body)) ? 204 : 409).end();
});
app.use((error: Error, _request: Request, response: Response, _next: NextFunction) => {
  response.status(500).json({ code: 'InternalError', message: error.message });
});

const server = app.listen(0, '127.0.0.1', () => announce(server.address()));
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
