import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

/** JSON bodies above this are refused with 413 (decisions §5). */
export const JSON_BODY_LIMIT = '16mb';

/** The HTTP setup shared by main.ts and the end-to-end tests, so both serve the same application. */
export function configureApp(app: NestExpressApplication): NestExpressApplication {
  app.disable('x-powered-by');
  // Tags are ours (versions), never Express's body hashes.
  app.set('etag', false);
  app.useBodyParser('json', { limit: JSON_BODY_LIMIT, type: ['application/json', 'application/*+json'] });

  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Intelligence Data Service')
      .setDescription(
        'Indicator collections with a change feed, enrichment tasks and their executor queue, and file storage. ' +
          'Authenticate with `Authorization: Bearer <token>` (from `GET /auth/token`) or `X-Api-Key`.',
      )
      .setVersion('1')
      .addBearerAuth()
      .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Api-Key' }, 'apiKey')
      .build(),
  );
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'openapi.json', yamlDocumentUrl: 'openapi.yaml' });
  return app;
}
