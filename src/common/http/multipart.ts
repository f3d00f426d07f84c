import { Readable } from 'node:stream';
import busboy from 'busboy';
import type { Request } from 'express';
import { CommonErrors } from '../errors/api-error.js';

/** The refusals of a multipart body: 400 BadRequest for its framing, 400 InvalidData for a field. */
const MultipartErrors = {
  notMultipart: () => CommonErrors.badRequest('the request body must be multipart/form-data with a boundary'),
  malformed: (reason: string) => CommonErrors.badRequest(`malformed multipart body: ${reason}`),
  invalidField: (message: string) => CommonErrors.invalidData(message),
};

/** One part of a multipart/form-data body. */
export interface FormPart {
  name: string | undefined;
  /** Present when the part is a file part (it carries a filename or is application/octet-stream). */
  filename: string | undefined;
  isFile: boolean;
  /** Content as a stream for both kinds of part, so a value sent as a file part reads like a plain value. */
  content: Readable;
}

/** Longest plain (non-file) value accepted; busboy buffers plain values, file parts are streamed. */
const MAX_PLAIN_VALUE_BYTES = 1024;

/**
 * Streams a multipart/form-data request through busboy and hands each part to `onPart`, which must
 * consume the content or reject. Settles once the body is read and every handler has settled.
 * On the first failure (a handler's, a malformed body, too many parts, a client abort) the request stops
 * being read, the connection is marked `Connection: close` if body is left unread, in-flight content
 * streams are destroyed, and the promise rejects only after every handler has settled, so that storage
 * has removed its temporary data before the error is answered.
 */
export function readMultipart(request: Request, maxParts: number, onPart: (part: FormPart) => Promise<void>): Promise<void> {
  const type = request.headers['content-type'];
  if (typeof type !== 'string' || !/^multipart\/form-data\s*;/i.test(type)) {
    return Promise.reject(MultipartErrors.notMultipart());
  }
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: request.headers,
      defParamCharset: 'utf8',
      limits: { parts: maxParts + 1, fieldSize: MAX_PLAIN_VALUE_BYTES, headerPairs: 16 },
    });
  } catch {
    return Promise.reject(MultipartErrors.notMultipart());
  }

  return new Promise<void>((resolve, reject) => {
    const handlers: Promise<void>[] = [];
    let failure: unknown;
    let parts = 0;

    const fail = (error: unknown) => {
      if (failure !== undefined) return;
      failure = error;
      request.unpipe(parser);
      if (!request.complete) {
        // The rest of the body is never read: the connection cannot carry another request.
        request.res?.setHeader('Connection', 'close');
        request.pause();
      }
      parser.destroy();
      void Promise.all(handlers).then(() => reject(failure));
    };
    const accept = (part: FormPart) => {
      if (failure !== undefined) {
        part.content.destroy();
        return;
      }
      if (++parts > maxParts) {
        part.content.destroy();
        fail(MultipartErrors.invalidField(`the form may hold at most ${maxParts} fields`));
        return;
      }
      handlers.push(onPart(part).catch(fail));
    };

    parser.on('file', (name, content, info) => {
      // A part refused before it was read has no consumer; if it is still arriving when fail() destroys the
      // parser, busboy destroys it with "Unexpected end of file", and an error event nobody listens to
      // would crash the process. Consumers (pipeline, for-await) attach their own listeners and see errors.
      content.on('error', () => undefined);
      accept({ name, filename: info.filename, isFile: true, content });
    });
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) {
        fail(MultipartErrors.invalidField(`field ${name} is too long`));
        return;
      }
      accept({ name, filename: undefined, isFile: false, content: Readable.from([Buffer.from(value, 'utf8')]) });
    });
    parser.on('error', (error: Error) => fail(MultipartErrors.malformed(error.message)));
    parser.on('close', () => {
      void Promise.all(handlers).then(() => {
        if (failure === undefined) resolve();
      });
    });
    request.on('error', () => fail(MultipartErrors.malformed('the client aborted the request')));
    request.on('close', () => {
      if (!request.complete) fail(MultipartErrors.malformed('the client aborted the request'));
    });
    request.pipe(parser);
  });
}

/** Reads a short value part (a number sent as a file or a plain field); longer than `maxBytes` → 400. */
export async function readValue(part: FormPart, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of part.content as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (length > maxBytes) {
      throw MultipartErrors.invalidField(`field ${part.name} is too long`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
