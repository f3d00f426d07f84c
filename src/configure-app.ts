import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import { ERROR_STATUS, type ErrorCode } from './common/errors/api-error.js';
import { sendErrorBody } from './common/errors/error-body.js';
import { createOpenApiDocument } from './common/http/openapi-document.js';
import { securityHeaders } from './common/http/security-headers.js';
import { applyServerLimits } from './common/http/server-limits.js';
import { ROOT_LOGGER } from './common/logging/logger.js';
import { requestLogging } from './common/logging/request-logging.js';
import { httpMetrics } from './common/metrics/http-metrics.js';
import { Metrics } from './common/metrics/metrics.js';
import { JSON_BODY_LIMIT_MIB } from './common/validation/json-body.js';
import { APP_CONFIG, type AppConfig } from './config/app-config.js';
import { BATCH_ROUTE, batchBodyReader } from './intel/batch/batch-body.js';
import { IMPORT_ROUTE, importBodyReader } from './intel/import/import-body.js';
import { STIX_BUNDLE_ROUTE } from './taxii/stix-bundle.controller.js';
import { boundedBodyReader, taxiiRequestReader } from './taxii/taxii-http.js';
import { TAXII_MAX_CONTENT_LENGTH } from './taxii/taxii-limits.js';
import { TaxiiErrors } from './taxii/taxii.errors.js';
import { WARNINGLIST_IMPORT_ROUTE, warninglistImportReader, warninglistJsonReader, WARNINGLISTS_ROUTE } from './warninglists/warninglist-body.js';

/** The HTTP setup shared by main.ts and the end-to-end tests, so both serve the same application. */
export function configureApp(app: NestExpressApplication): NestExpressApplication {
  app.disable('x-powered-by');
  const config = app.get<AppConfig>(APP_CONFIG);
  app.use(securityHeaders());
  // The client address (request.ip) from X-Forwarded-For only when the peer is one of these proxies.
  if (config.trustProxy.length > 0) app.set('trust proxy', config.trustProxy);
  // Tags are ours (versions), never Express's body hashes.
  app.set('etag', false);
  // Before the body parser, so that refused bodies also get a request id, a log line and a timing.
  app.use(requestLogging(app.get(ROOT_LOGGER)));
  if (config.metricsPort !== 0) app.use(httpMetrics(app.get(Metrics)));
  // Batches have their own size limit and may be NDJSON: their route reads its body first (see batch-body.ts).
  app.use(BATCH_ROUTE, batchBodyReader());
  app.use(IMPORT_ROUTE, importBodyReader());
  // TAXII requests and STIX bundles: bodies read as bytes up to their limit, so their routes answer 413 themselves.
  app.use('/taxii2', taxiiRequestReader());
  // Warninglists: bodies up to 64 MiB (a million entries), a MISP document as bytes (its SHA-256).
  app.use(WARNINGLIST_IMPORT_ROUTE, warninglistImportReader());
  app.use(WARNINGLISTS_ROUTE, warninglistJsonReader());
  app.use(
    STIX_BUNDLE_ROUTE,
    boundedBodyReader(TAXII_MAX_CONTENT_LENGTH, (response) => sendErrorBody(response, TaxiiErrors.tooLarge())),
  );
  app.useBodyParser('json', { limit: `${JSON_BODY_LIMIT_MIB}mb`, type: ['application/json', 'application/*+json'] });
  applyServerLimits(app.getHttpServer() as Server, config.server);
  answerParserErrorsWithJson(app.getHttpServer() as Server);

  // Built on the first request for it, not at start: generating it is about half a second of CPU, which every
  // start paid (a hundred-odd app boots per test run) though few clients ever ask for the document.
  SwaggerModule.setup('docs', app, () => createOpenApiDocument(app), { jsonDocumentUrl: 'openapi.json', yamlDocumentUrl: 'openapi.yaml' });
  return app;
}

/** What Node reports on a connection before the request reaches Nest, and how we answer it. */
const CLIENT_ERRORS: Record<string, { code: ErrorCode; reason: string; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    code: 'RequestHeaderFieldsTooLarge',
    reason: 'Request Header Fields Too Large',
    message: 'the request headers are too large',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    code: 'RequestTimeout',
    reason: 'Request Timeout',
    message: "the request did not arrive within the server's time limit",
  },
};
const NOT_HTTP = { code: 'BadRequest', reason: 'Bad Request', message: 'the request is not valid HTTP/1.1' } as const;

/**
 * Requests that Node's HTTP parser refuses (oversized headers, broken framing) or that miss the server's
 * deadlines never reach Nest, and Node's default answer has no body, which the client cannot decode. Answer
 * them in the shared error shape, unless a response already started on the connection, then close it.
 */
function answerParserErrorsWithJson(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex & { _httpMessage?: { headersSent: boolean } }) => {
    if (!socket.writable || error.code === 'ECONNRESET' || socket._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    const { code, reason, message } = CLIENT_ERRORS[error.code ?? ''] ?? NOT_HTTP;
    const body = JSON.stringify({ code, message });
    // Destroyed once written: a client that never closes its side must not keep the connection.
    socket.once('finish', () => socket.destroy());
    socket.end(
      `HTTP/1.1 ${ERROR_STATUS[code]} ${reason}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
  });
}
