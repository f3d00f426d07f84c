import { httpLoad } from '../lib/load.js';
import { compare, finishRow, type RowModule } from '../lib/row.js';
import { cheapRoute, tokenForReader } from './cheap-route.js';

const ROW = {
  id: '9',
  title: 'route under a daily request limit vs same route, key without limits',
  unit: 'req/s',
  target: { minRatio: 0.8 },
};

/** Largest limit the API accepts (a PostgreSQL integer): the bench never exhausts it. */
const HUGE_DAILY_LIMIT = 2_147_483_647;

/**
 * Row 9: the cost of counting a request against a daily limit (decisions §4: counted atomically in
 * PostgreSQL). Two keys with the same Read permission on the same route as row 1; one also has a
 * `Day` limit on exactly that (resource, Read), so every request of it is counted. All requests of a
 * key hit the same counter row, which is the realistic worst case (one busy key).
 */
export const row9: RowModule = {
  rows: [ROW],
  requires: [],
  async run(ctx) {
    const route = await cheapRoute(ctx);
    const limited = await tokenForReader(ctx, route.resourceId, HUGE_DAILY_LIMIT);
    const unlimited = await tokenForReader(ctx, route.resourceId);
    const { scale } = ctx;
    const load = (token: string, seconds: number) =>
      httpLoad({
        baseUrl: ctx.service.url,
        connections: scale.connections,
        durationS: seconds,
        headers: { Authorization: `Bearer ${token}` },
        requests: [{ method: 'GET', path: route.path }],
      }).done;
    const measured = await compare({
      rounds: scale.cheapRounds,
      serviceLabel: `${route.label}, key with a Day limit`,
      baselineLabel: `${route.label}, key without limits`,
      warmService: () => load(limited, scale.warmupSeconds),
      warmBaseline: () => load(unlimited, scale.warmupSeconds),
      service: async () => ({ outcome: await load(limited, scale.cheapSeconds) }),
      baseline: async () => ({ outcome: await load(unlimited, scale.cheapSeconds) }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      bothSidesThroughService: true,
    });
    return [finishRow(ROW, measured, [`route: ${route.label}`, `${scale.connections} connections`])];
  },
};
