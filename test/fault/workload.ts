import { createHash, randomBytes } from 'node:crypto';

export const sha256 = (data: Buffer | Uint8Array) => createHash('sha256').update(data).digest('hex');
export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An object write the service acknowledged; `sent` and `acked` are ticks of one logical clock of all clients. */
export interface AckedObject {
  key: string;
  sent: number;
  acked: number;
}

export interface AckedFile {
  fileId: string;
  sha256: string;
  size: number;
}

/** A session whose parts were all acknowledged but whose completion was not. */
export interface UncompletedSession {
  sessionId: string;
  sha256: string;
}

interface Answer {
  status: number;
  body: { code?: string; fileID?: string; sessionID?: string } | undefined;
}

const PART_SIZE = 1024 * 1024;

/**
 * Concurrent clients that keep writing until stopped: object writers (each object added once, under its own
 * MD5 key), direct uploaders, and session clients (create, two parts, complete). Each records only what the
 * service acknowledged with a 2xx; a failed request (connection refused or cut, or an error answer) is
 * retried with new content after a short pause, as a client would, so the load continues through an outage.
 */
export class Workload {
  readonly objects: AckedObject[] = [];
  readonly files: AckedFile[] = [];
  readonly uncompleted: UncompletedSession[] = [];
  /** Every error answer: its status and code (a connection failure is not an answer). */
  readonly errorAnswers: { status: number; code: string | undefined }[] = [];
  private clock = 0;
  private stopping = false;
  private clients: Promise<void>[] = [];

  constructor(
    private readonly url: string,
    private readonly apiKey: string,
    private readonly collection: string,
  ) {}

  start(writers = 4, uploaders = 2, sessions = 2): void {
    this.clients = [
      ...Array.from({ length: writers }, (_, w) => this.objectWriter(w)),
      ...Array.from({ length: uploaders }, () => this.uploader()),
      ...Array.from({ length: sessions }, () => this.sessionClient()),
    ];
  }

  /** Resolves once `check` holds (polled); fails the test, naming `what`, if it does not within 30 s. */
  async until(check: () => boolean, what: string): Promise<void> {
    for (let attempt = 0; attempt < 600 && !check(); attempt++) await pause(50);
    if (!check()) throw new Error(`the workload did not reach: ${what}`);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.clients);
  }

  private async objectWriter(writer: number): Promise<void> {
    for (let seq = 0; !this.stopping; seq++) {
      const key = createHash('md5').update(`${writer}/${seq}`).digest('hex');
      const sent = ++this.clock;
      const answer = await this.call('POST', `/intel/collections/${this.collection}/objects`, {
        json: { type: 'File', keys: [{ type: 'MD5Hash', value: key }], context: { writer, seq } },
      });
      if (answer?.status === 204) this.objects.push({ key, sent, acked: ++this.clock });
      else await pause(50);
    }
  }

  private async uploader(): Promise<void> {
    while (!this.stopping) {
      const content = randomBytes(1024 + Math.floor(Math.random() * 256 * 1024));
      const form = new FormData();
      form.append('file', new Blob([content]), 'upload.bin');
      const answer = await this.call('PUT', '/filebox/files', { form });
      if (answer?.status === 201 && answer.body?.fileID) {
        this.files.push({ fileId: answer.body.fileID, sha256: sha256(content), size: content.length });
      } else {
        await pause(50);
      }
    }
  }

  private async sessionClient(): Promise<void> {
    while (!this.stopping) {
      const created = await this.call('POST', '/filebox/sessions', { json: { partSize: PART_SIZE } });
      const sessionId = created?.status === 201 ? created.body?.sessionID : undefined;
      if (!sessionId) {
        await pause(50);
        continue;
      }
      const parts = [randomBytes(PART_SIZE), randomBytes(1 + Math.floor(Math.random() * 64 * 1024))];
      const stored = await Promise.all(
        parts.map(async (content, index) => {
          const form = new FormData();
          form.append('number', String(index + 1));
          form.append('partSize', String(content.length));
          form.append('filePart', new Blob([content]), 'upload');
          return (await this.call('PUT', `/filebox/sessions/${sessionId}/parts`, { form }))?.status === 204;
        }),
      );
      if (!stored.every(Boolean)) {
        await pause(50);
        continue;
      }
      const digest = sha256(Buffer.concat(parts));
      const completed = await this.call('POST', `/filebox/sessions/${sessionId}/completed`, {});
      if (completed?.status === 201 && completed.body?.fileID) {
        this.files.push({ fileId: completed.body.fileID, sha256: digest, size: PART_SIZE + parts[1].length });
      } else {
        this.uncompleted.push({ sessionId, sha256: digest });
        await pause(50);
      }
    }
  }

  /** One request; undefined when no answer came (refused, cut, timed out). */
  private async call(method: string, path: string, body: { json?: unknown; form?: FormData }): Promise<Answer | undefined> {
    const headers: Record<string, string> = { 'X-Api-Key': this.apiKey };
    if (body.json !== undefined) headers['Content-Type'] = 'application/json';
    try {
      const response = await fetch(`${this.url}${path}`, {
        method,
        headers,
        body: body.form ?? (body.json === undefined ? undefined : JSON.stringify(body.json)),
        signal: AbortSignal.timeout(20_000),
      });
      const text = await response.text();
      let parsed: Answer['body'];
      try {
        parsed = text === '' ? undefined : (JSON.parse(text) as Answer['body']);
      } catch {
        parsed = undefined; // an error answer that is not JSON shows as a missing code
      }
      if (response.status >= 400) this.errorAnswers.push({ status: response.status, code: parsed?.code });
      return { status: response.status, body: parsed };
    } catch {
      return undefined;
    }
  }
}
