import { join } from 'node:path';
import { Readable } from 'node:stream';
import type autocannon from 'autocannon';
import { MiB, type Content } from '../lib/content.js';
import { httpLoad, stepLoad } from '../lib/load.js';
import { compare, finishRow, type RowModule } from '../lib/row.js';
import { contentOf, fileboxToken, storageNote, uploadSession, type UploadedFile } from './row7-upload.js';

const ROW = { id: '8', title: 'ranged download of 1 GiB in 50 MiB ranges', unit: 'MiB/s', target: { minRatio: 0.8 } };

/**
 * Row 8: the 1 GiB file of row 7b read `scale.downloadPasses` times in 50 MiB ranges
 * (`Range: bytes=a-b`, 206 with `Content-Range`), `scale.downloadConnections` ranges at a time. Every
 * response's Content-Range is checked. Baseline: the raw `node:http` server streaming the same ranges
 * (fs.createReadStream with start/end) from a file with the same bytes. Both files are read right after
 * being written, so both sit in the page cache alike.
 */
export const row8: RowModule = {
  rows: [ROW],
  requires: ['GET /filebox/files/{fileID}/content', 'POST /filebox/sessions'],
  async run(ctx) {
    const { scale } = ctx;
    const token = await fileboxToken(ctx);
    const auth = { Authorization: `Bearer ${token}` };
    let file = ctx.shared.get('uploadedFile') as UploadedFile | undefined;
    if (!file) {
      // Row 7 did not run (or was not selected): upload the file untimed.
      const content = contentOf(ctx);
      const size = scale.sessionFileBytes;
      const { fileId } = await uploadSession(ctx.service.url, auth, content, 1_000_000, size, scale.partBytes);
      if (!fileId) throw new Error('could not upload the download row’s file');
      file = { fileId, size, firstMiB: 1_000_000, content };
    }
    const baselineName = 'download.bin';
    // The baseline's copy of the same bytes: a file for the raw server, or one object in the same bucket.
    const baselineKey = ctx.s3
      ? await ctx.s3.upload(Readable.from(chunksOf(file.content, file.firstMiB, file.size)))
      : await file.content.writeFile(join(ctx.baselineFilesDir, baselineName), file.firstMiB, file.size);

    const ranges = Math.ceil(file.size / scale.rangeBytes);
    const size = file.size;
    let badRanges = 0;
    const load = (baseUrl: string, path: string, headers: Record<string, string>, passes: number) => {
      let next = 0;
      const request: autocannon.Request = {
        method: 'GET',
        path,
        setupRequest: (req, context) => {
          const start = (next++ % ranges) * scale.rangeBytes;
          const end = Math.min(start + scale.rangeBytes, size) - 1;
          context.expected = `bytes ${start}-${end}/${size}`;
          return { ...req, headers: { ...req.headers, Range: `bytes=${start}-${end}` } };
        },
        onResponse: (status, _body, context, responseHeaders) => {
          const got = responseHeaders['content-range'] ?? responseHeaders['Content-Range'];
          if (status !== 206 || got !== context.expected) badRanges++;
        },
      };
      return httpLoad({ baseUrl, connections: scale.downloadConnections, amount: passes * ranges, timeoutS: 120, headers, requests: [request] }).done;
    };
    // The same ranges read with the SDK (GetObject with Range), as many at a time.
    const s3Load = (passes: number) => {
      let next = 0;
      return stepLoad({
        concurrency: scale.downloadConnections,
        amount: passes * ranges,
        step: async () => {
          const start = (next++ % ranges) * scale.rangeBytes;
          const end = Math.min(start + scale.rangeBytes, size) - 1;
          if ((await ctx.s3!.readRange(baselineKey as string, start, end)) !== end - start + 1) badRanges++;
        },
      });
    };
    const baselineLoad = (passes: number) => (ctx.s3 ? s3Load(passes) : load(ctx.baselineServer.url, `/files/${baselineName}`, {}, passes));
    const mib = (passes: number) => (passes * size) / MiB;
    const servicePath = `/filebox/files/${file.fileId}/content`;
    const measured = await compare({
      // One pass per round, alternating: drift on a busy machine hits both sides alike.
      rounds: scale.downloadPasses,
      serviceLabel: 'GET …/content with Range',
      baselineLabel: ctx.s3 ? 'raw SDK: GetObject of the same ranges from the same S3' : 'raw node:http streaming the same ranges',
      warmService: () => load(ctx.service.url, servicePath, auth, 1),
      warmBaseline: () => baselineLoad(1),
      service: async () => ({ outcome: await load(ctx.service.url, servicePath, auth, 1), units: mib(1) }),
      baseline: async () => ({ outcome: await baselineLoad(1), units: mib(1) }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      baselineProbe: ctx.s3 ? undefined : ctx.baselineServer.probe,
    });
    if (badRanges > 0) throw new Error(`${badRanges} range responses were not 206 with the expected Content-Range`);
    return [
      finishRow(ROW, measured, [
        `${size / MiB} MiB × ${scale.downloadPasses} passes in ${ranges} ranges of ${scale.rangeBytes / MiB} MiB, ${scale.downloadConnections} at a time`,
        ...storageNote(ctx),
      ]),
    ];
  },
};

/** `bytes` of the content stream from MiB `firstMiB`, 16 MiB at a time. */
function* chunksOf(content: Content, firstMiB: number, bytes: number): Generator<Buffer> {
  for (let offset = 0; offset < bytes; offset += 16 * MiB) yield content.slice(firstMiB + offset / MiB, Math.min(16 * MiB, bytes - offset));
}
