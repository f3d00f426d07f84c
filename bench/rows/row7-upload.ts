import { Readable } from 'node:stream';
import { Content, fileShell, MiB, partShell, ReusedForms } from '../lib/content.js';
import { sequentialHttpLoad, stepLoad, type LoadOutcome, type SequentialRequest } from '../lib/load.js';
import { compare, finishRow, skippedRow, type Phase, type RowContext, type RowModule } from '../lib/row.js';
import { RESOURCE } from './intel-setup.js';

const DIRECT = {
  id: '7a',
  title: 'direct upload of 50 MiB files (PUT /filebox/files)',
  unit: 'MiB/s',
  target: { minRatio: 0.7, maxGrowthMiB: 64 },
};
const DIRECT_FLOOR = {
  id: '7af',
  title: "digest floor of row 7a: the raw server hashing each body through the service build's digest worker",
  unit: 'MiB/s',
  target: {},
};
const SESSION_FLOOR = {
  id: '7bf',
  title: "digest floor of row 7b: the raw server hashing each part body through the service build's digest worker",
  unit: 'MiB/s',
  target: {},
};
const DIRECT_FILENAME = 'sample.bin';
const SESSION = {
  id: '7b',
  title: '1 GiB through 5 MiB session parts',
  unit: 'MiB/s',
  target: { minRatio: 0.7, maxGrowthMiB: 64 },
};

/** What row 7b leaves for row 8: the uploaded file and where its bytes start in the content stream. */
export interface UploadedFile {
  fileId: string;
  size: number;
  firstMiB: number;
  content: Content;
}

export async function fileboxToken(ctx: RowContext): Promise<string> {
  const cached = ctx.shared.get('fileboxToken') as string | undefined;
  if (cached) return cached;
  const { key } = await ctx.admin.createKey({ permissions: [{ resource: RESOURCE.filebox, actions: ['Read', 'Write'] }] });
  const token = await ctx.admin.withKey(key).token();
  ctx.shared.set('fileboxToken', token);
  return token;
}

/** Which storage the service wrote to, for the notes of rows 7 and 8. */
export function storageNote(ctx: RowContext): string[] {
  return ctx.s3 ? ['storage: S3 (s3rver on the loopback, own process)'] : [];
}

export function contentOf(ctx: RowContext): Content {
  let content = ctx.shared.get('content') as Content | undefined;
  if (!content) ctx.shared.set('content', (content = new Content()));
  return content;
}

/**
 * The SDK's session upload on one connection: create the session, PUT every part in order (the SDK uploads
 * them one after another) from one reused buffer, complete. Resolves with the load and the completion's
 * `{fileID}`.
 */
export async function uploadSession(
  baseUrl: string,
  headers: Record<string, string>,
  content: Content,
  firstMiB: number,
  size: number,
  partBytes: number,
): Promise<{ outcome: LoadOutcome; fileId?: string }> {
  const parts = Math.ceil(size / partBytes);
  const forms = partForms(content, partBytes);
  let session = '';
  let fileId: string | undefined;
  const outcome = await sequentialHttpLoad({
    baseUrl,
    amount: parts + 2,
    timeoutS: 300,
    headers,
    next: (index): SequentialRequest => {
      if (index === 0) {
        return {
          method: 'POST',
          path: '/filebox/sessions',
          headers: { 'Content-Type': 'application/json' },
          body: Buffer.from(JSON.stringify({ partSize: partBytes })),
          onResponse: (_status, body) => (session = (JSON.parse(body) as { sessionID: string }).sessionID),
        };
      }
      if (index > parts) {
        return {
          method: 'POST',
          path: `/filebox/sessions/${session}/completed`,
          onResponse: (_status, body) => (fileId = (JSON.parse(body) as { fileID: string }).fileID),
        };
      }
      return { method: 'PUT', path: `/filebox/sessions/${session}/parts`, ...partRequest(forms, index - 1, firstMiB, size, partBytes) };
    },
  });
  return { outcome, fileId };
}

function partForms(content: Content, partBytes: number): ReusedForms {
  // Room for the longest number fields.
  return new ReusedForms(content, partBytes, partShell(2 ** 31, partBytes));
}

/** Headers and body of part `i` (from 0) of a file of `size` bytes starting at MiB `firstMiB`. */
function partRequest(forms: ReusedForms, i: number, firstMiB: number, size: number, partBytes: number) {
  const bytes = Math.min(partBytes, size - i * partBytes);
  return formRequest(forms.form(partShell(i + 1, bytes), firstMiB + (i * partBytes) / MiB, bytes));
}

function formRequest(form: { contentType: string; body: Buffer }) {
  return { headers: { 'Content-Type': form.contentType }, body: form.body };
}

/** The same part bodies, one request each, for the baseline server (which pipes each body to a file, at `path`). */
function rawParts(baseUrl: string, path: string, content: Content, firstMiB: number, size: number, partBytes: number): Promise<LoadOutcome> {
  const forms = partForms(content, partBytes);
  return sequentialHttpLoad({
    baseUrl,
    amount: Math.ceil(size / partBytes),
    timeoutS: 300,
    next: (i) => ({ method: 'PUT', path, ...partRequest(forms, i, firstMiB, size, partBytes) }),
  });
}

/**
 * A digest-floor comparison (rows 7af, 7bf): the raw server's `/upload-hashed` against its own `/upload`,
 * `send(path)` sending the same uploads to either; the raw server is the process measured (CPU, memory).
 * None on S3, where the baseline is the SDK, not this server.
 */
function digestFloor(ctx: RowContext, rounds: number, what: string, send: (path: string) => () => Promise<Phase>) {
  if (ctx.s3) return undefined;
  return compare({
    rounds,
    serviceLabel: `raw node:http piping ${what} to a file + four digests (service digest worker)`,
    baselineLabel: `raw node:http piping ${what} to a file`,
    service: send('/upload-hashed'),
    baseline: send('/upload'),
    serviceProbe: ctx.baselineServer.probe,
    cpu: { ...ctx.cpu, service: ctx.baselineServer.probe },
  });
}

/**
 * Row 7: uploads, in MiB of file content per second, with the service's peak RSS growth during the row
 * (target < 64 MiB: content must stream, never sit whole in memory).
 *   7a: `scale.directFiles` files of 50 MiB, `PUT /filebox/files` (multipart field `file`), two at a time.
 *   7b: one 1 GiB file the SDK's way: session, 5 MiB parts one after another, completion (which
 *       assembles the parts into the file; that time counts).
 * Baseline: a raw `node:http` server in its own process receiving the identical request bodies, piping
 * each to a file with the same durability as the service's storage (temporary file, fsync, rename).
 * With `--storage s3`: raw @aws-sdk/client-s3 calls from the bench storing the same contents in the same
 * S3 server, as the service does (7a: multipart upload of unknown length; 7b: one PUT per part).
 */
export const row7: RowModule = {
  rows: [DIRECT, DIRECT_FLOOR, SESSION, SESSION_FLOOR],
  requires: ['PUT /filebox/files', 'POST /filebox/sessions', 'PUT /filebox/sessions/{sessionID}/parts', 'POST /filebox/sessions/{sessionID}/completed'],
  async run(ctx) {
    const { scale } = ctx;
    const token = await fileboxToken(ctx);
    const content = contentOf(ctx);
    const auth = { Authorization: `Bearer ${token}` };
    // Every file takes fresh MiB numbers of the content stream, so no two uploads carry the same bytes.
    let nextMiB = 0;
    const take = (bytes: number) => {
      const first = nextMiB;
      nextMiB += Math.ceil(bytes / MiB);
      return first;
    };

    // Every connection sends its files one after another from its own reused buffer, on both sides.
    const directForms = Array.from({ length: scale.directConnections }, () => new ReusedForms(content, scale.directFileBytes, fileShell(DIRECT_FILENAME)));
    const direct = (baseUrl: string, path: string, files: number, bytes: number, headers: Record<string, string>) =>
      sequentialHttpLoad({
        baseUrl,
        connections: Math.min(scale.directConnections, files),
        amount: files,
        timeoutS: 120,
        headers,
        next: (_index, connection) => ({
          method: 'PUT',
          path,
          ...formRequest(directForms[connection]!.form(fileShell(DIRECT_FILENAME), take(bytes), bytes)),
        }),
      });
    // The same files stored straight into the bucket, as many at a time, each worker from its own buffer.
    const directBuffers = ctx.s3 ? Array.from({ length: scale.directConnections }, () => Buffer.allocUnsafeSlow(scale.directFileBytes)) : [];
    const directS3 = (files: number, bytes: number) =>
      stepLoad({
        concurrency: Math.min(scale.directConnections, files),
        amount: files,
        step: async (worker) => {
          await ctx.s3!.upload(Readable.from([content.fill(directBuffers[worker]!, 0, take(bytes), bytes).subarray(0, bytes)]));
        },
      });
    const directBaseline = (files: number, bytes: number) => (ctx.s3 ? directS3(files, bytes) : direct(ctx.baselineServer.url, '/upload', files, bytes, {}));
    const directMiB = (files: number) => (files * scale.directFileBytes) / MiB;
    const half = Math.ceil(scale.directFiles / 2);
    const directMeasured = await compare({
      // Two alternating rounds of half the files each: drift on a busy machine hits both sides alike.
      rounds: 2,
      serviceLabel: 'PUT /filebox/files (multipart)',
      baselineLabel: ctx.s3 ? 'raw SDK: multipart upload of the same file to the same S3' : 'raw node:http piping the body to a file',
      warmService: () => direct(ctx.service.url, '/filebox/files', 2, MiB, auth),
      warmBaseline: () => directBaseline(2, MiB),
      service: async () => ({ outcome: await direct(ctx.service.url, '/filebox/files', half, scale.directFileBytes, auth), units: directMiB(half) }),
      baseline: async () => ({ outcome: await directBaseline(half, scale.directFileBytes), units: directMiB(half) }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      baselineProbe: ctx.s3 ? undefined : ctx.baselineServer.probe,
    });

    // Rows 7af and 7bf: what any server that hashes the bodies this way reaches beside the same raw baseline.
    const directFloor = await digestFloor(ctx, 2, 'the body', (path) => async () => ({
      outcome: await direct(ctx.baselineServer.url, path, half, scale.directFileBytes, {}),
      units: directMiB(half),
    }));

    const size = scale.sessionFileBytes;
    const parts = Math.ceil(size / scale.partBytes);
    let uploaded: UploadedFile | undefined;
    const sessionMeasured = await compare({
      rounds: 1,
      serviceLabel: 'session + 5 MiB parts + completion',
      baselineLabel: ctx.s3 ? 'raw SDK: one PUT per part of the same bytes to the same S3' : 'raw node:http piping each part body to a file',
      service: async () => {
        const firstMiB = take(size);
        const { outcome, fileId } = await uploadSession(ctx.service.url, auth, content, firstMiB, size, scale.partBytes);
        if (!fileId) throw new Error(`the session upload returned no fileID (${outcome.failures.firstFailure ?? 'no failure recorded'})`);
        uploaded = { fileId, size, firstMiB, content };
        return { outcome, units: size / MiB };
      },
      baseline: async () => {
        const firstMiB = take(size);
        let next = 0;
        // As the service side, every part from one reused buffer.
        const part = ctx.s3 ? Buffer.allocUnsafeSlow(scale.partBytes) : undefined;
        const outcome = ctx.s3
          ? await stepLoad({
              concurrency: 1,
              amount: parts,
              step: async () => {
                const i = next++;
                const bytes = Math.min(scale.partBytes, size - i * scale.partBytes);
                await ctx.s3!.put(content.fill(part!, 0, firstMiB + (i * scale.partBytes) / MiB, bytes).subarray(0, bytes));
              },
            })
          : await rawParts(ctx.baselineServer.url, '/upload', content, firstMiB, size, scale.partBytes);
        return { outcome, units: size / MiB };
      },
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      baselineProbe: ctx.s3 ? undefined : ctx.baselineServer.probe,
    });
    ctx.shared.set('uploadedFile', uploaded);
    const sessionFloor = await digestFloor(ctx, 1, 'each part body', (path) => async () => ({
      outcome: await rawParts(ctx.baselineServer.url, path, content, take(size), size, scale.partBytes),
      units: size / MiB,
    }));
    const floorNote = 'local disk only: on S3 the baseline is the SDK, not this server';
    return [
      finishRow(DIRECT, directMeasured, [
        `${2 * half} files of ${scale.directFileBytes / MiB} MiB per side in 2 rounds, ${scale.directConnections} at a time`,
        ...storageNote(ctx),
      ]),
      directFloor ? finishRow(DIRECT_FLOOR, directFloor, [`${2 * half} files per side in 2 rounds`]) : skippedRow(DIRECT_FLOOR, floorNote),
      finishRow(SESSION, sessionMeasured, [`${size / MiB} MiB in ${parts} parts of ${scale.partBytes / MiB} MiB, one connection`, ...storageNote(ctx)]),
      sessionFloor ? finishRow(SESSION_FLOOR, sessionFloor, [`${parts} parts per side`]) : skippedRow(SESSION_FLOOR, floorNote),
    ];
  },
};
