/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for asserting on `/metrics`:
 * every line must be a `# HELP`/`# TYPE` line or a sample of a declared family, label values properly
 * escaped, values numbers; histogram buckets cumulative, ending in `+Inf` equal to `_count`. Any violation
 * throws. (The npm parser tried first dropped histogram labels, so this one is ours.)
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface MetricFamily {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: (-?\\d+))?$`);
const LABEL_PAIR = new RegExp(`^(${LABEL})="((?:[^"\\\\\\n]|\\\\[\\\\"n])*)"`);
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** Values as Prometheus reads them (Go's ParseFloat): decimals, and Inf/NaN in any letter case. */
function parseValue(raw: string, line: string): number {
  if (/^\+?inf(inity)?$/i.test(raw)) return Infinity;
  if (/^-inf(inity)?$/i.test(raw)) return -Infinity;
  if (/^nan$/i.test(raw)) return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw)) throw new Error(`not a number in: ${line}`);
  return Number(raw);
}

function parseLabels(raw: string | undefined, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = raw ?? '';
  while (rest !== '') {
    const match = LABEL_PAIR.exec(rest);
    if (!match) throw new Error(`bad labels in: ${line}`);
    if (match[1] in labels) throw new Error(`repeated label in: ${line}`);
    labels[match[1]] = match[2].replace(/\\(.)/g, (_all, c: string) => (c === 'n' ? '\n' : c));
    rest = rest.slice(match[0].length);
    if (rest.startsWith(',')) rest = rest.slice(1);
    else if (rest !== '') throw new Error(`bad labels in: ${line}`);
  }
  return labels;
}

function familyOf(families: Map<string, MetricFamily>, sampleName: string): MetricFamily | undefined {
  const exact = families.get(sampleName);
  if (exact) return exact;
  const suffix = /_(bucket|sum|count)$/.exec(sampleName);
  const family = suffix ? families.get(sampleName.slice(0, suffix.index)) : undefined;
  if (family?.type === 'histogram' || (family?.type === 'summary' && suffix![1] !== 'bucket')) return family;
  return undefined;
}

function checkHistogram(family: MetricFamily): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (sample.name.endsWith('_bucket')) entry.buckets.push([parseValue(le ?? 'missing', sample.name), sample.value]);
    if (sample.name.endsWith('_count')) entry.count = sample.value;
  }
  for (const [key, { buckets, count }] of series) {
    const sorted = [...buckets].sort((a, b) => a[0] - b[0]);
    if (sorted.at(-1)?.[0] !== Infinity || sorted.at(-1)?.[1] !== count) throw new Error(`${family.name}${key}: +Inf bucket ≠ count`);
    if (sorted.some(([, value], i) => i > 0 && value < sorted[i - 1][1])) throw new Error(`${family.name}${key}: buckets not cumulative`);
  }
}

export function parsePrometheusText(text: string): Map<string, MetricFamily> {
  const families = new Map<string, MetricFamily>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = new RegExp(`^# (HELP|TYPE) (${NAME}) ?(.*)$`).exec(line);
    if (meta) {
      const family = families.get(meta[2]) ?? { name: meta[2], type: 'untyped', help: '', samples: [] };
      families.set(meta[2], family);
      if (meta[1] === 'HELP') family.help = meta[3];
      else if (TYPES.has(meta[3])) family.type = meta[3];
      else throw new Error(`unknown type in: ${line}`);
      continue;
    }
    if (line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const family = familyOf(families, match[1]);
    if (!family) throw new Error(`sample of an undeclared family: ${line}`);
    family.samples.push({ name: match[1], labels: parseLabels(match[2], line), value: parseValue(match[3], line) });
  }
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** Scrapes a `/metrics` endpoint and parses it strictly. */
export async function scrape(url: string): Promise<{ contentType: string | null; families: Map<string, MetricFamily> }> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`scrape of ${url} answered ${response.status}`);
  return { contentType: response.headers.get('content-type'), families: parsePrometheusText(await response.text()) };
}

/**
 * The value of the sample of family `name` whose labels include `labels` (for a histogram: its `_count`),
 * 0 when there is none yet (a labelled series appears once it has been touched).
 */
export function sampleOf(families: Map<string, MetricFamily>, name: string, labels: Record<string, string> = {}): number {
  const family = families.get(name);
  if (!family) throw new Error(`no metric family ${name}`);
  const sampleName = family.type === 'histogram' ? `${name}_count` : name;
  const sample = family.samples.find(
    (candidate) => candidate.name === sampleName && Object.entries(labels).every(([key, value]) => candidate.labels[key] === value),
  );
  return sample?.value ?? 0;
}
