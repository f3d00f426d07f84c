import { httpLoad } from '../lib/load.js';
import { compare, finishRow, floorSide, type RowModule } from '../lib/row.js';

const ROW = {
  id: '2',
  title: 'GET /health/live vs raw node:http answering the same JSON',
  unit: 'req/s',
  target: {},
};
const FLOOR = {
  id: '2f',
  title: 'stack floor of row 2: the bare framework answering the same JSON',
  unit: 'req/s',
  target: {},
};

/**
 * Row 2 (report only): the fixed cost of the framework stack (Express, Nest routing, the global guard,
 * interceptors, filter) per request, against a bare `node:http` server in its own process answering the
 * same `{"status":"ok"}` with the same content type. Same connections and duration.
 * Row 2f: the stack floor (bench/floor/) answering the same JSON against the same raw server: the ratio no
 * service on that framework can beat.
 */
export const row2: RowModule = {
  rows: [ROW, FLOOR],
  requires: ['GET /health/live'],
  async run(ctx) {
    const { scale } = ctx;
    const load = (baseUrl: string, seconds: number) =>
      httpLoad({ baseUrl, connections: scale.connections, durationS: seconds, requests: [{ method: 'GET', path: '/health/live' }] }).done;
    const measured = await compare({
      rounds: scale.cheapRounds,
      serviceLabel: 'GET /health/live (service)',
      baselineLabel: 'raw node:http, same JSON',
      warmService: () => load(ctx.service.url, scale.warmupSeconds),
      warmBaseline: () => load(ctx.baselineServer.url, scale.warmupSeconds),
      service: async () => ({ outcome: await load(ctx.service.url, scale.cheapSeconds) }),
      baseline: async () => ({ outcome: await load(ctx.baselineServer.url, scale.cheapSeconds) }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      baselineProbe: ctx.baselineServer.probe,
    });
    const floor = await compare({
      rounds: scale.cheapRounds,
      serviceLabel: `${ctx.floorName}, same JSON`,
      baselineLabel: 'raw node:http, same JSON',
      warmService: () => load(ctx.floorServer.url, scale.warmupSeconds),
      warmBaseline: () => load(ctx.baselineServer.url, scale.warmupSeconds),
      service: async () => ({ outcome: await load(ctx.floorServer.url, scale.cheapSeconds) }),
      baseline: async () => ({ outcome: await load(ctx.baselineServer.url, scale.cheapSeconds) }),
      ...floorSide(ctx),
      baselineProbe: ctx.baselineServer.probe,
    });
    const notes = [`${scale.connections} connections`];
    return [finishRow(ROW, measured, notes), finishRow(FLOOR, floor, notes)];
  },
};
