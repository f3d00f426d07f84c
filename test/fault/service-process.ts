import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { COMPILE_CACHE, freePort } from '../support/processes.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/**
 * The built service (`node dist/main.js`) as a separate process, as an operator runs it, so that it can be
 * killed with SIGKILL mid-request and started again on the same database, data directory and port.
 */
export class ServiceProcess {
  readonly adminKey = randomBytes(32).toString('base64url');
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  /** The last output of the process, shown when it fails to start. */
  private output = '';
  /** Every error the process logged (a 500's stack, an unhandled failure), over all its runs. */
  readonly errors: string[] = [];

  private constructor(
    readonly port: number,
    private readonly settings: Record<string, string>,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** `settings` are environment variables besides PORT and ADMIN_API_KEY (DATABASE_URL, DATA_DIR, ...). */
  static async start(settings: Record<string, string>): Promise<ServiceProcess> {
    const service = new ServiceProcess(await freePort(), settings);
    await service.restart();
    return service;
  }

  /** Starts the process (again) and resolves once it answers HTTP. */
  async restart(): Promise<void> {
    // Only what the service needs: no setting of the developer's environment leaks in.
    // No metrics listener: its fixed default port would collide between services of parallel test files.
    const env = {
      PATH: process.env.PATH ?? '',
      NODE_COMPILE_CACHE: COMPILE_CACHE,
      METRICS_PORT: '0',
      ...this.settings,
      PORT: String(this.port),
      ADMIN_API_KEY: this.adminKey,
    };
    const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.output = '';
    const keep = (chunk: Buffer) => {
      const text = chunk.toString();
      this.output = (this.output + text).slice(-8000);
      // Nest writes one log entry per write; an error entry carries the level ERROR.
      if (/\bERROR\b/.test(text)) this.errors.push(text.replace(/\u001b\[[0-9;]*m/g, ''));
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    for (let attempt = 0; attempt < 300; attempt++) {
      if (child.exitCode !== null || child.signalCode !== null) break;
      const live = await fetch(`${this.url}/health/live`).catch(() => undefined);
      if (live?.status === 200) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    child.kill('SIGKILL');
    throw new Error(`the service did not start:\n${this.output}`);
  }

  /** kill -9: no shutdown hook, no flush, requests in flight are cut. */
  async kill(): Promise<void> {
    this.child?.kill('SIGKILL');
    await this.exited;
  }

  /** A graceful stop (SIGTERM), killed if it takes longer than 10 s. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(timer);
  }

  /** What the process wrote lately (for failure messages). */
  get log(): string {
    return this.output;
  }
}
