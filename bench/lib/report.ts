import type { RowResult } from './row.js';

function number(value: number | undefined, digits = 0): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function ms(value: number | undefined): string {
  if (value === undefined) return '–';
  return value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0);
}

function throughput(value: number | undefined): string {
  if (value === undefined) return '–';
  return value < 100 ? number(value, 1) : number(value);
}

function target(row: RowResult): string {
  const parts: string[] = [];
  if (row.target.minRatio !== undefined) parts.push(`≥ ${row.target.minRatio}`);
  if (row.target.maxGrowthMiB !== undefined) parts.push(`mem < ${row.target.maxGrowthMiB} MiB`);
  return parts.length ? parts.join(', ') : 'report';
}

function verdict(row: RowResult): string {
  if (row.status !== 'ok') return row.status.toUpperCase();
  if (row.met === undefined) return '';
  return row.met ? 'met' : 'MISSED';
}

function memory(row: RowResult): string {
  const m = row.service?.memory;
  if (!m) return '–';
  const growth = m.growthMiB >= 0 ? `+${number(m.growthMiB)}` : number(m.growthMiB);
  return `${number(m.peakRssMiB)} (${growth})`;
}

const HEADERS = [
  'Row',
  'Service path',
  'Unit',
  'Service',
  'p50 ms',
  'p99 ms',
  'Baseline',
  'Baseline thr.',
  'p50 ms',
  'p99 ms',
  'Ratio',
  'Target',
  'Verdict',
  'Svc peak RSS MiB (growth)',
];

function cells(row: RowResult): string[] {
  if (row.status !== 'ok') {
    return [row.id, row.title, row.unit, '', '', '', row.reason ?? '', '', '', '', '', target(row), verdict(row), ''];
  }
  return [
    row.id,
    row.service!.label,
    row.unit,
    throughput(row.service!.throughput),
    ms(row.service!.p50Ms),
    ms(row.service!.p99Ms),
    row.baseline!.label,
    throughput(row.baseline!.throughput),
    ms(row.baseline!.p50Ms),
    ms(row.baseline!.p99Ms),
    number(row.ratio, 2),
    target(row),
    verdict(row),
    memory(row),
  ];
}

/** A fixed-width table for the terminal. */
export function textTable(rows: RowResult[]): string {
  const body = rows.map(cells);
  const widths = HEADERS.map((header, i) => Math.min(48, Math.max(header.length, ...body.map((r) => r[i].length))));
  const line = (values: string[]) =>
    values.map((value, i) => (value.length > widths[i] ? `${value.slice(0, widths[i] - 1)}…` : value.padEnd(widths[i]))).join(' │ ');
  return [line(HEADERS), widths.map((w) => '─'.repeat(w)).join('─┼─'), ...body.map(line)].join('\n');
}

/** The same table in Markdown, for BENCHMARKS.md. */
export function markdownTable(rows: RowResult[]): string {
  const escape = (value: string) => value.replace(/\|/g, '\\|');
  return [`| ${HEADERS.join(' | ')} |`, `|${HEADERS.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${cells(row).map(escape).join(' | ')} |`)].join(
    '\n',
  );
}

/** Per row, the statements each side ran per request (pg_stat_statements), heaviest first. */
export function sqlPerRequest(rows: RowResult[]): string | undefined {
  const lines: string[] = [];
  for (const row of rows) {
    if (!row.sql) continue;
    const describe = (side: string, statements: NonNullable<RowResult['sql']>['service']) => {
      const shown = statements.filter((statement) => (statement.perRequest ?? 1) >= 0.01).slice(0, 6);
      if (shown.length === 0) return;
      lines.push(`  ${row.id} ${side}:`);
      for (const statement of shown) {
        const per = statement.perRequest !== undefined ? `${statement.perRequest.toFixed(2)}/req` : `${statement.calls} calls`;
        lines.push(`      ${per.padStart(10)}  ${statement.meanMs.toFixed(3).padStart(8)} ms  ${statement.query.slice(0, 110)}`);
      }
    };
    describe('service', row.sql.service);
    describe('baseline', row.sql.baseline);
  }
  return lines.length ? `SQL per request (pg_stat_statements: statements per request, mean execution time):\n${lines.join('\n')}` : undefined;
}

/** Where the CPU went, per work unit of each side: service, PostgreSQL, the bench itself, the baseline server. */
export function cpuPerUnitTable(rows: RowResult[]): string {
  const fmt = (value: number | undefined) => (value === undefined ? '–' : value < 10 ? value.toFixed(3) : value.toFixed(1));
  const lines = ['CPU ms per unit (measured phases; service │ PostgreSQL │ bench/load generator │ baseline server):'];
  for (const row of rows) {
    if (row.status !== 'ok') continue;
    for (const [name, side] of [
      ['service ', row.service],
      ['baseline', row.baseline],
    ] as const) {
      const cpu = side?.cpuPerUnit;
      if (!cpu) continue;
      lines.push(
        `  ${row.id.padEnd(3)} ${name} per ${row.unit.replace(/\/s$/, '').padEnd(8)} ${fmt(cpu.serviceMs).padStart(8)} │ ${fmt(cpu.databaseMs).padStart(8)} │ ${fmt(cpu.benchMs).padStart(8)} │ ${fmt(cpu.baselineServerMs).padStart(8)}`,
      );
    }
  }
  return lines.join('\n');
}
