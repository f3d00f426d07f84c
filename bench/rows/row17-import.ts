import { createHash } from 'node:crypto';
import { sequentialHttpLoad } from '../lib/load.js';
import { compare, finishRow, type RowContext, type RowModule } from '../lib/row.js';
import { createCollection } from './intel-setup.js';

const ROW = {
  id: '17',
  title: 'free-text import of defanged indicators (mixed kinds) against the batch endpoint with the same objects',
  unit: 'indicators/s',
  target: { minRatio: 0.7 },
};

const CONTEXT = { source: 'bench import' };

/** Indicator `g` as a report writes it (defanged) and as the object it becomes. */
function indicator(side: string, g: number): { text: string; object: { type: string; keys: { type: string; value: string }[]; context: object } } {
  const digest = (algorithm: string) => createHash(algorithm).update(`${side}${g}`).digest('hex');
  const of = (type: string, keyType: string, value: string, text: string) => ({ text, object: { type, keys: [{ type: keyType, value }], context: CONTEXT } });
  const address = `10.${(g >> 16) & 255}.${(g >> 8) & 255}.${g & 255}`;
  switch (g % 5) {
    case 0:
      return of('File', 'MD5Hash', digest('md5'), `dropper md5 ${digest('md5').toUpperCase()}`);
    case 1:
      return of('DomainName', 'DomainName', `c2-${side}${g}.bench-import.com`, `beacons to c2-${side}${g}[.]bench-import[.]com`);
    case 2:
      return of('URL', 'URL', `https://dl-${side}${g}.bench-import.com/payload.bin`, `fetches hxxps://dl-${side}${g}[.]bench-import[.]com/payload.bin,`);
    case 3:
      return of('IPAddress', 'IPAddress', address, `connects to ${address.replace(/\.(\d+)$/, '[.]$1')}`);
    default:
      return of('File', 'SHA256Hash', digest('sha256'), `payload sha256 ${digest('sha256')}`);
  }
}

/**
 * Row 17: `POST .../import?format=text` of a report naming `scale.importIndicators` new indicators
 * (hashes, domains, URLs, addresses, defanged, one per sentence), every answer checked to have added all
 * of them; against `POST .../objects/batch` with the same objects as a JSON array (new ones too), into a
 * collection of its own. Both one request at a time.
 */
export const row17: RowModule = {
  rows: [ROW],
  requires: ['POST /intel/collections/{collection_id}/import', 'POST /intel/collections/{collection_id}/objects/batch'],
  async run(ctx: RowContext) {
    const { scale } = ctx;
    const size = scale.importIndicators;
    const [imported, batched] = [await createCollection(ctx, 'import'), await createCollection(ctx, 'import-batch')];
    const { key } = await ctx.admin.createKey({
      permissions: [imported, batched].map((collection) => ({ resource: collection.resourceId, actions: ['Write'] })),
    });
    const headers = { Authorization: `Bearer ${await ctx.admin.withKey(key).token()}` };
    let incomplete = 0;
    const counted = (status: number, body: string, added: (parsed: unknown) => number) => {
      if (status === 200 && added(JSON.parse(body)) !== size) incomplete++;
    };
    let importRequests = 0;
    let batchRequests = 0;
    const batchOf = (side: string, request: number) => Array.from({ length: size }, (_, i) => indicator(side, request * size + i));
    /** `amount` sequential POSTs of `body()` to `path`, each expected to add `size` objects (`added` of its answer). */
    const posts = (amount: number, path: string, requestHeaders: Record<string, string>, body: () => Buffer, added: (parsed: unknown) => number) =>
      sequentialHttpLoad({
        baseUrl: ctx.service.url,
        amount,
        headers,
        timeoutS: 120,
        next: () => ({ method: 'POST', path, headers: requestHeaders, body: body(), onResponse: (status, text) => counted(status, text, added) }),
      });
    const served = (amount: number) =>
      posts(
        amount,
        `/intel/collections/${imported.name}/import?format=text`,
        { 'Content-Type': 'text/plain; charset=utf-8', 'X-Import-Context': JSON.stringify(CONTEXT) },
        () =>
          Buffer.from(
            batchOf('t', importRequests++)
              .map((item) => `The sample ${item.text} today.`)
              .join('\n'),
          ),
        (parsed) => (parsed as { report: { added: number } }).report.added,
      );
    const baseline = (amount: number) =>
      posts(
        amount,
        `/intel/collections/${batched.name}/objects/batch`,
        { 'Content-Type': 'application/json' },
        () => Buffer.from(JSON.stringify(batchOf('j', batchRequests++).map((item) => item.object))),
        (parsed) => (parsed as { added: number }).added,
      );
    const requests = scale.quick ? 2 : 6;
    const measured = await compare({
      rounds: scale.rounds,
      serviceLabel: `POST …/import?format=text (${size} indicators)`,
      baselineLabel: `POST …/objects/batch (the same ${size} objects as JSON)`,
      warmService: () => served(1),
      warmBaseline: () => baseline(1),
      service: async () => ({ outcome: await served(requests), units: requests * size }),
      baseline: async () => ({ outcome: await baseline(requests), units: requests * size }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      bothSidesThroughService: true,
    });
    if (incomplete > 0) throw new Error(`${incomplete} requests did not add all ${size} indicators`);
    return [finishRow(ROW, measured, [`${requests} requests of ${size} new indicators per side per round, one at a time, into one collection per side`])];
  },
};
