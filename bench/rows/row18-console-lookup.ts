import { httpLoad } from '../lib/load.js';
import { compare, finishRow, type RowContext, type RowModule } from '../lib/row.js';
import { seededLookup } from './lookup-setup.js';

const ROW = {
  id: '18',
  title: 'console lookup: 1,000 pasted indicators to the rendered known/unknown page vs the API lookup',
  unit: 'lookups/s',
  target: { minRatio: 0.5 },
};

/** Signs in to the console with `key` as a browser form would; returns the session cookie pair. */
async function consoleCookie(ctx: RowContext, key: string): Promise<string | undefined> {
  const response = await fetch(`${ctx.service.url}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Sec-Fetch-Site': 'same-origin' },
    body: new URLSearchParams({ key }).toString(),
  });
  await response.text();
  if (response.status === 404) return undefined;
  if (response.status !== 303) throw new Error(`console sign-in answered ${response.status}`);
  return response.headers.get('set-cookie')?.split(';')[0];
}

/**
 * Row 18: `POST /console/lookup` with `scale.lookupKeys` pasted lines (the keys of row 11, half of them
 * stored), a signed-in session reading exactly the lookup collections; each answer is the whole rendered
 * page, checked to count every stored key as known and every other as unknown. Baseline: `POST
 * /intel/lookup` of the same keys with a bearer token of an equal key, on the same process: the difference
 * is the console's session check, line parsing and HTML rendering. 2 clients each.
 */
export const row18: RowModule = {
  rows: [ROW],
  requires: ['POST /intel/lookup'],
  async run(ctx: RowContext) {
    const { scale } = ctx;
    const data = await seededLookup(ctx);
    const { key } = await ctx.admin.createKey({ permissions: data.resourceIds.map((resource) => ({ resource, actions: ['Read'] })) });
    const cookie = await consoleCookie(ctx, key);
    if (cookie === undefined) throw new Error('the console is off (CONSOLE_ENABLED=false)');
    // The page counts distinct keys (the API answers each key sent, duplicates included): a set's stored
    // keys (even positions) and absent ones (odd positions) may repeat, e.g. the absent MD5 of 0xf and 0xff.
    const headings = data.keySets.map((keys) => {
      const distinct = (odd: number) => new Set(keys.filter((_, i) => i % 2 === odd).map((k) => `${k.type} ${k.value}`)).size;
      return `>${distinct(0)} known, ${distinct(1)} unknown<`;
    });
    const forms = data.keySets.map((keys) => new URLSearchParams({ indicators: keys.map((k) => k.value).join('\n') }).toString());
    const bodies = data.keySets.map((keys) => JSON.stringify({ keys }));
    const clients = 2;
    let wrong = 0;
    let nextForm = 0;
    let nextBody = 0;
    const pasted = (seconds: number) =>
      httpLoad({
        baseUrl: ctx.service.url,
        connections: clients,
        durationS: seconds,
        keepBodies: true,
        headers: { Cookie: cookie, 'Content-Type': 'application/x-www-form-urlencoded', 'Sec-Fetch-Site': 'same-origin' },
        requests: [
          {
            method: 'POST',
            path: '/console/lookup',
            setupRequest: (request) => ({ ...request, body: forms[nextForm++ % forms.length] }),
            onResponse: (status, body) => {
              if (status !== 200 || !headings.some((heading) => body.includes(heading))) wrong++;
            },
          },
        ],
      }).done;
    const api = (seconds: number) =>
      httpLoad({
        baseUrl: ctx.service.url,
        connections: clients,
        durationS: seconds,
        headers: { Authorization: `Bearer ${data.token}`, 'Content-Type': 'application/json' },
        requests: [{ method: 'POST', path: '/intel/lookup', setupRequest: (request) => ({ ...request, body: bodies[nextBody++ % bodies.length] }) }],
      }).done;
    const measured = await compare({
      rounds: scale.cheapRounds,
      serviceLabel: `POST /console/lookup (${scale.lookupKeys} lines, rendered page)`,
      baselineLabel: `POST /intel/lookup (same ${scale.lookupKeys} keys, JSON)`,
      warmService: () => pasted(scale.warmupSeconds),
      warmBaseline: () => api(scale.warmupSeconds),
      service: async () => ({ outcome: await pasted(scale.cheapSeconds) }),
      baseline: async () => ({ outcome: await api(scale.cheapSeconds) }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
    });
    if (wrong > 0) throw new Error(`${wrong} console pages did not count every stored key as known, and every other as unknown`);
    return [finishRow(ROW, measured, [`${clients} concurrent clients each; the keys of row 11`])];
  },
};
