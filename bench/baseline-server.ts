/**
 * The raw `node:http` baselines of rows 2, 7 and 8, run as their own process (like the service) so that
 * the load generator never shares an event loop with the server it measures.
 *
 *   GET  /health/live          → the same JSON body the service answers: {"status":"ok"}
 *   PUT  /upload               → pipes the request body to a new file under --dir (write, fsync, rename, fsync of --dir:
 *   POST|PUT /upload             the storage contract of decisions §10), answers 201 {"fileID"}
 *   PUT  /upload-hashed        → the same, hashing the body on the way with the four digests of decisions §10 through
 *                                the service build's own digest worker (--digest-worker, its `filebox/digest-worker.js`),
 *                                and answers once both the file and the digests are done: the digest floor of row 7
 *   GET  /files/<name>         → streams the `Range: bytes=a-b` slice of --dir/<name> with 206 and
 *                                Content-Range (whole file with 200 without Range)
 *
 * Prints `LISTENING <port>` once it accepts connections.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rename, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { basename, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';

const dirIndex = process.argv.indexOf('--dir');
const dir = dirIndex > 0 ? process.argv[dirIndex + 1] : process.cwd();
const HEALTH_BODY = JSON.stringify({ status: 'ok' });
const digestWorkerIndex = process.argv.indexOf('--digest-worker');
const digestWorker = digestWorkerIndex > 0 ? process.argv[digestWorkerIndex + 1] : undefined;

/** What the floor uses of the service's `StreamDigests`. */
interface Hasher {
  update(chunk: Buffer): Promise<void>;
  digests(): Promise<unknown>;
}
let hasherClass: Promise<new () => Hasher> | undefined;

/** A pass-through that hashes on the way as the service's ContentMeter does: the chunk goes on at once. */
async function hashing(): Promise<{ transform: Transform; digests: () => Promise<unknown> }> {
  if (!digestWorker) throw new Error('the baseline server was started without --digest-worker');
  hasherClass ??= import(pathToFileURL(digestWorker).href).then((module: { StreamDigests: new () => Hasher }) => module.StreamDigests);
  const hasher = new (await hasherClass)();
  const transform = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      this.push(chunk);
      hasher.update(chunk).then(() => callback(), callback);
    },
  });
  return { transform, digests: () => hasher.digests() };
}

function json(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  response.end(body);
}

async function upload(request: IncomingMessage, response: ServerResponse, hashed: boolean): Promise<void> {
  const id = randomUUID();
  const temporary = join(dir, `${id}.part`);
  const hash = hashed ? await hashing() : undefined;
  await pipeline([request, ...(hash ? [hash.transform] : []), createWriteStream(temporary)]);
  // The digests finish while the file is made durable, the best order for a server that needs both.
  await Promise.all([store(temporary, id), hash?.digests()]);
  json(response, 201, JSON.stringify({ fileID: id }));
}

/** fsync, rename into place, fsync of the directory. */
async function store(temporary: string, id: string): Promise<void> {
  const handle = await open(temporary, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, join(dir, id));
  // And the directory, as the service's local storage does (the rename is durable only then).
  const directory = await open(dir, 'r');
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}

async function download(request: IncomingMessage, response: ServerResponse, name: string): Promise<void> {
  const path = join(dir, basename(name));
  const { size } = await stat(path);
  const range = /^bytes=(\d+)-(\d*)$/.exec(request.headers.range ?? '');
  if (!request.headers.range) {
    response.writeHead(200, { 'Content-Length': size, 'Content-Type': 'application/octet-stream' });
    await pipeline(createReadStream(path), response);
    return;
  }
  if (!range) return json(response, 400, '{"code":"InvalidData"}');
  const start = Number(range[1]);
  const end = Math.min(range[2] === '' ? size - 1 : Number(range[2]), size - 1);
  if (start >= size) return json(response, 416, '{"code":"RangeNotSatisfiable"}');
  response.writeHead(206, {
    'Content-Length': end - start + 1,
    'Content-Range': `bytes ${start}-${end}/${size}`,
    'Content-Type': 'application/octet-stream',
  });
  await pipeline(createReadStream(path, { start, end }), response);
}

const server = createServer((request, response) => {
  const url = request.url ?? '/';
  let work: Promise<void> | void;
  if (request.method === 'GET' && url === '/health/live') work = json(response, 200, HEALTH_BODY);
  else if ((request.method === 'PUT' || request.method === 'POST') && url.startsWith('/upload')) {
    work = upload(request, response, url.startsWith('/upload-hashed'));
  } else if (request.method === 'GET' && url.startsWith('/files/')) work = download(request, response, url.slice('/files/'.length));
  else work = json(response, 404, '{"code":"NotFound"}');
  if (work) {
    work.catch((error: unknown) => {
      if (!response.headersSent) json(response, 500, JSON.stringify({ code: 'InternalError', message: String(error) }));
      else response.destroy();
    });
  }
});
// Node's defaults, the same as the service's underlying http.Server (Express adds nothing here).
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
