import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ERROR_STATUS, type ErrorCode } from './common/errors/api-error.js';
import { createOpenApiDocument } from './common/http/openapi-document.js';
import { BATCH_ROUTE, batchBodyReader } from './intel/batch/batch-body.js';

/** JSON bodies above this are refused with 413 (decisions §5). */
export const JSON_BODY_LIMIT = '16mb';

/** The HTTP setup shared by main.ts and the end-to-end tests, so both serve the same application. */
export function configureApp(app: NestExpressApplication): NestExpressApplication {
  app.disable('x-powered-by');
  // Tags are ours (versions), never Express's body hashes.
  app.set('etag', false);
  // Batches have their own size limit and may be NDJSON: their route reads its body first (see batch-body.ts).
  app.use(BATCH_ROUTE, batchBodyReader());
  app.useBodyParser('json', { limit: JSON_BODY_LIMIT, type: ['application/json', 'application/*+json'] });
  answerParserErrorsWithJson(app.getHttpServer() as Server);

  const document = createOpenApiDocument(app);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'openapi.json', yamlDocumentUrl: 'openapi.yaml' });
  return app;
}

/**
 * Requests that Node's HTTP parser refuses (oversized headers, broken framing) never reach Nest, and Node's
 * default answer has no body, which the client cannot decode. Answer them in the shared error shape.
 */
function answerParserErrorsWithJson(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const code: ErrorCode = error.code === 'HPE_HEADER_OVERFLOW' ? 'RequestHeaderFieldsTooLarge' : 'BadRequest';
    const body = JSON.stringify({
      code,
      message: code === 'BadRequest' ? 'the request is not valid HTTP/1.1' : 'the request headers are too large',
    });
    const status = ERROR_STATUS[code];
    socket.end(
      `HTTP/1.1 ${status} ${code === 'BadRequest' ? 'Bad Request' : 'Request Header Fields Too Large'}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
  });
}
