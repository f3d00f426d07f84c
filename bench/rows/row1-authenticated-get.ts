import { httpLoad } from '../lib/load.js';
import { compare, finishRow, type RowModule } from '../lib/row.js';
import { cheapRoute, tokenForReader } from './cheap-route.js';

const ROW = {
  id: '1',
  title: 'authenticated cheap GET vs GET /health/live (same stack)',
  unit: 'req/s',
  target: { minRatio: 0.6 },
};

/**
 * Row 1: what authentication, the permission check and one small read cost on top of the bare stack.
 * Service: a key holding Read on the collection sends `Authorization: Bearer <token>` (as the SDK does)
 * to view the collection. Baseline: `GET /health/live` on the same process, through the same Express,
 * guard, interceptors and filter: the difference is exactly the authenticated work. Both at
 * `scale.connections` concurrent keep-alive clients for the same time.
 */
export const row1: RowModule = {
  rows: [ROW],
  requires: [],
  async run(ctx) {
    const route = await cheapRoute(ctx);
    const token = await tokenForReader(ctx, route.resourceId);
    const { scale } = ctx;
    const load = (path: string, headers: Record<string, string>, seconds: number) =>
      httpLoad({ baseUrl: ctx.service.url, connections: scale.connections, durationS: seconds, headers, requests: [{ method: 'GET', path }] }).done;
    const authorised = { Authorization: `Bearer ${token}` };
    const measured = await compare({
      rounds: scale.cheapRounds,
      serviceLabel: route.label,
      baselineLabel: 'GET /health/live (same process)',
      warmService: () => load(route.path, authorised, scale.warmupSeconds),
      warmBaseline: () => load('/health/live', {}, scale.warmupSeconds),
      service: async () => ({ outcome: await load(route.path, authorised, scale.cheapSeconds) }),
      baseline: async () => ({ outcome: await load('/health/live', {}, scale.cheapSeconds) }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
    });
    return [finishRow(ROW, measured, [`route: ${route.label}`, `${scale.connections} connections`])];
  },
};
