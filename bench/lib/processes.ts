import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProcessProbe } from './memory.js';

/** A child process started by the bench, with its log file and a /proc probe. */
export class ChildServer {
  readonly probe: ProcessProbe;
  private exited = false;
  private readonly exit: Promise<number | null>;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
    readonly logFile: string,
    public url = '',
  ) {
    this.probe = new ProcessProbe(child.pid!);
    this.exit = new Promise((resolve) =>
      child.once('exit', (code) => {
        this.exited = true;
        resolve(code);
      }),
    );
  }

  get running(): boolean {
    return !this.exited;
  }

  async logTail(lines = 30): Promise<string> {
    try {
      return (await readFile(this.logFile, 'utf8')).split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  /** SIGTERM (graceful shutdown), SIGKILL after `graceMs`. */
  async stop(graceMs = 15_000): Promise<void> {
    if (this.exited) return;
    this.child.kill('SIGTERM');
    const killed = await Promise.race([this.exit.then(() => false), sleep(graceMs).then(() => true)]);
    if (killed && !this.exited) {
      this.child.kill('SIGKILL');
      await this.exit;
    }
  }

  exitCode(): Promise<number | null> {
    return this.exit;
  }
}

/** Spawns `node <script> …args` with its stdout and stderr appended to `logFile`. */
export function spawnNode(
  name: string,
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  logFile: string,
  cwd: string,
  nodeArgs: string[] = [],
): ChildServer {
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  return new ChildServer(name, child, logFile);
}

/** Polls `url` until it answers 200, the process exits, or `timeoutMs` passes. */
export async function waitForHttp(server: ChildServer, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!server.running) {
      throw new Error(`${server.name} exited during start-up (code ${await server.exitCode()}):\n${await server.logTail()}`);
    }
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(150);
  }
  throw new Error(`${server.name} did not become ready at ${url} within ${timeoutMs} ms:\n${await server.logTail()}`);
}
