import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';

export const MiB = 1024 * 1024;

/**
 * Incompressible, deterministic file content built from one random MiB: MiB number `i` of a stream is
 * that block with `i` stamped into its first 8 bytes, so every MiB of every file differs while the
 * bench never holds more than the buffers it is about to send.
 */
export class Content {
  private readonly block = randomBytes(MiB);

  /** `bytes` bytes of the stream starting at MiB number `firstMiB` (`bytes` need not be whole MiB). */
  slice(firstMiB: number, bytes: number): Buffer {
    return this.fill(Buffer.allocUnsafe(bytes), 0, firstMiB, bytes);
  }

  /** Writes what `slice` returns into `target` at `at`; returns `target`. */
  fill(target: Buffer, at: number, firstMiB: number, bytes: number): Buffer {
    for (let offset = 0, i = firstMiB; offset < bytes; offset += MiB, i++) {
      const length = Math.min(MiB, bytes - offset);
      this.block.copy(target, at + offset, 0, length);
      if (length >= 8) target.writeBigUInt64BE(BigInt(i), at + offset);
    }
    return target;
  }

  /** Writes `bytes` bytes of the stream starting at MiB `firstMiB` to `path` (for the download baseline). */
  async writeFile(path: string, firstMiB: number, bytes: number): Promise<void> {
    const handle = await open(path, 'w');
    try {
      for (let offset = 0; offset < bytes; offset += 16 * MiB) {
        const length = Math.min(16 * MiB, bytes - offset);
        await handle.write(this.slice(firstMiB + offset / MiB, length));
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}

export interface MultipartField {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

const BOUNDARY = 'bench0513c47451acd3012b2b6dcff68f83cb';

/** A `multipart/form-data` body in one buffer, fields in the given order (what httpx sends). */
export function multipart(fields: MultipartField[]): { contentType: string; body: Buffer } {
  const chunks: Buffer[] = [];
  for (const field of fields) {
    const disposition = `form-data; name="${field.name}"${field.filename !== undefined ? `; filename="${field.filename}"` : ''}`;
    chunks.push(
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\nContent-Type: ${field.contentType ?? 'application/octet-stream'}\r\n\r\n`),
      field.data,
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return { contentType: `multipart/form-data; boundary=${BOUNDARY}`, body: Buffer.concat(chunks) };
}

const EMPTY = Buffer.alloc(0);

/** The fields of a session part exactly as the SDK sends them, the content left out: number, partSize and filePart, each a file part named "upload". */
export function partShell(number: number, size: number): MultipartField[] {
  return [
    { name: 'number', filename: 'upload', data: Buffer.from(String(number)) },
    { name: 'partSize', filename: 'upload', data: Buffer.from(String(size)) },
    { name: 'filePart', filename: 'upload', data: EMPTY },
  ];
}

/** The field of a direct upload, the content left out: one `file`. */
export function fileShell(filename: string): MultipartField[] {
  return [{ name: 'file', filename, data: EMPTY }];
}

/**
 * Multipart forms whose last field carries content of the stream, written byte for byte as `multipart`
 * builds them into one buffer that every form reuses: a fresh multi-megabyte body per request (and
 * autocannon's copy of it behind the request line) cost the load generator more CPU per MiB than the raw
 * server, and how much depended on the allocator's state, not on the server measured.
 */
export class ReusedForms {
  private readonly buffer: Buffer;

  /** `longest`: the fields (content left out) of the longest form it will hold, around `maxBytes` of content. */
  constructor(
    private readonly content: Content,
    maxBytes: number,
    longest: MultipartField[],
  ) {
    this.buffer = Buffer.allocUnsafeSlow(multipart(longest).body.length + maxBytes);
  }

  /** The form of `fields` whose last field holds `bytes` bytes of the content from MiB `firstMiB`; valid until the next call. */
  form(fields: MultipartField[], firstMiB: number, bytes: number): { contentType: string; body: Buffer } {
    // The form around an empty last field, split where the content goes.
    const { contentType, body: shell } = multipart(fields);
    const head = shell.length - Buffer.byteLength(`\r\n--${BOUNDARY}--\r\n`);
    shell.copy(this.buffer, 0, 0, head);
    this.content.fill(this.buffer, head, firstMiB, bytes);
    const end = head + bytes + shell.copy(this.buffer, head + bytes, head);
    return { contentType, body: this.buffer.subarray(0, end) };
  }
}
