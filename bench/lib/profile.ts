import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Where a frame's code lives: a package, the service's own build, Node internals, or V8 pseudo-frames. */
function ownerOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return 'node: (core)';
  const service = /\/(?:dist|service)\/(.+)$/.exec(url);
  if (service) return `service ${service[1].split('/').slice(0, -1).join('/') || '.'}`;
  return url;
}

/**
 * Summarises the V8 CPU profiles the service wrote under `--cpu-prof` (bench `--profile`): self time by
 * package or service directory and the hottest functions, as text. Idle time is left out of the shares.
 */
export async function summariseProfiles(dir: string, top = 25): Promise<string> {
  const files = (await readdir(dir)).filter((name) => name.endsWith('.cpuprofile'));
  const lines: string[] = [];
  for (const file of files) {
    const profile = JSON.parse(await readFile(join(dir, file), 'utf8')) as CpuProfile;
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const self = new Map<number, number>();
    profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
    const byOwner = new Map<string, number>();
    const byFunction = new Map<string, number>();
    let busy = 0;
    for (const [id, micros] of self) {
      const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
      if (functionName === '(idle)') continue;
      busy += micros;
      const owner = ownerOf(url, functionName);
      byOwner.set(owner, (byOwner.get(owner) ?? 0) + micros);
      const name = `${functionName || '(anonymous)'} ${owner}${url ? `:${lineNumber + 1}` : ''}`;
      byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
    }
    const share = (micros: number) => `${((micros / busy) * 100).toFixed(1).padStart(5)}%`;
    lines.push(`${file}: ${(busy / 1e6).toFixed(1)} s on CPU of ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s`);
    lines.push('  self time by owner:');
    for (const [owner, micros] of [...byOwner].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`    ${share(micros)}  ${owner}`);
    lines.push('  hottest functions (self time):');
    for (const [name, micros] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`    ${share(micros)}  ${name}`);
  }
  return lines.join('\n');
}
