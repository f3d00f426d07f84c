import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from '@jest/globals';
import { EmbeddedDatabase } from '../../src/database/embedded-postgres.js';

/**
 * Plan assertions (test/database/query-plans*.e2e-spec.ts): a cluster of their own with auto_explain, which
 * writes the plan of every statement the service runs, with its actual rows and buffer counts (no timings),
 * to the cluster's log as JSON; the tests read the plans of the statements they care about from there.
 */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Parent Relationship'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

export interface ExplainedStatement {
  query: string;
  plan: PlanNode;
}

/** The JSON document (object) starting at `start`, or undefined when the text ends before it does. */
function jsonDocumentAt(text: string, start: number): string | undefined {
  if (start < 0) return undefined;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i += 1) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{') depth += 1;
    else if (char === '}' && --depth === 0) return text.slice(start, i + 1);
  }
  return undefined;
}

export function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/**
 * The nodes under `plan` reached without passing a Limit: what a Sort at `plan` would have to read. CTEs
 * and subplans are plans of their own (checked on their own), read through their CTE Scan.
 */
export function unlimitedBelow(plan: PlanNode): PlanNode[] {
  return (plan.Plans ?? [])
    .filter((child) => child['Node Type'] !== 'Limit' && !['InitPlan', 'SubPlan'].includes(child['Parent Relationship'] ?? ''))
    .flatMap((child) => [child, ...unlimitedBelow(child)]);
}

/** The buffers a plan read (shared hits and reads, its children's included). */
export function buffersOf(plan: PlanNode): number {
  return (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0);
}

/**
 * No sequential scan of `tables`, no sort of their rows (unless `sortsResult`: the statement sorts its
 * bounded result), and at most `maxBuffers` buffers. PLANS_DEBUG=1 prints the plan.
 */
export function expectBoundedPlan(plan: PlanNode, tables: string[], maxBuffers: number, sortsResult = false): void {
  const all = nodes(plan);
  const onTable = (node: PlanNode) => tables.includes(node['Relation Name'] ?? '');
  // A sort of a page (above the Limit that bounds it) is fine; a sort of the table's rows is not.
  const sorts = sortsResult ? [] : all.filter((node) => node['Node Type'].includes('Sort') && unlimitedBelow(node).some(onTable));
  const scans = all.filter((node) => node['Node Type'] === 'Seq Scan' && onTable(node));
  if (process.env.PLANS_DEBUG) process.stderr.write(JSON.stringify(plan, null, 1) + '\n');
  const buffers = buffersOf(plan);
  expect({ sorts: sorts.length, seqScans: scans.map((node) => node['Relation Name']), boundedBuffers: buffers <= maxBuffers, buffers }).toEqual({
    sorts: 0,
    seqScans: [],
    boundedBuffers: true,
    buffers,
  });
}

export interface ExplainingCluster {
  /** A database of the cluster, for `createTestApp({ DATABASE_URL })`. */
  databaseUrl: string;
  /** The plans auto_explain logged since the last call, of the statements whose text matches `pattern`. */
  plansSince(pattern: RegExp): ExplainedStatement[];
  /** Waits for the server's log to catch up (it arrives asynchronously), then returns `plansSince(pattern)`. */
  plansAfterLog(pattern: RegExp): Promise<ExplainedStatement[]>;
  stop(): Promise<void>;
}

/** Starts a cluster explaining every statement (see above), with one database named `name`. */
export async function startExplainingCluster(name: string): Promise<ExplainingCluster> {
  const root = await mkdtemp(join(tmpdir(), 'ids-plans-'));
  let serverLog = '';
  let logOffset = 0;
  let cluster: EmbeddedDatabase | undefined;
  try {
    cluster = await EmbeddedDatabase.start(join(root, 'pg'), {
      ephemeral: true,
      log: (message) => {
        serverLog += message;
      },
      settings: {
        session_preload_libraries: 'auto_explain',
        'auto_explain.log_min_duration': '0',
        'auto_explain.log_analyze': 'on',
        'auto_explain.log_buffers': 'on',
        'auto_explain.log_timing': 'off',
        'auto_explain.log_format': 'json',
      },
    });
    const databaseUrl = await cluster.createDatabase(name);
    const plansSince = (pattern: RegExp): ExplainedStatement[] => {
      const text = serverLog.slice(logOffset);
      logOffset = serverLog.length;
      const found: ExplainedStatement[] = [];
      // Each plan is a pretty-printed JSON document after "plan:" in the server's stderr.
      for (let at = text.indexOf('plan:'); at !== -1; at = text.indexOf('plan:', at + 1)) {
        const json = jsonDocumentAt(text, text.indexOf('{', at));
        if (json === undefined) break;
        const explained = JSON.parse(json) as { 'Query Text': string; Plan: PlanNode };
        if (pattern.test(explained['Query Text'])) found.push({ query: explained['Query Text'], plan: explained.Plan });
      }
      return found;
    };
    const started = cluster;
    return {
      databaseUrl,
      plansSince,
      plansAfterLog: async (pattern) => {
        await new Promise((settle) => setTimeout(settle, 200));
        return plansSince(pattern);
      },
      stop: async () => {
        await started.stop();
        await rm(root, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await cluster?.stop();
    await rm(root, { recursive: true, force: true });
    throw error;
  }
}
