import {
  ArgumentsHost,
  CallHandler,
  CanActivate,
  Catch,
  ExceptionFilter,
  ExecutionContext,
  HttpException,
  Injectable,
  Logger,
  NestInterceptor,
} from '@nestjs/common';
import { ModuleRef, Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { map, Observable } from 'rxjs';
import { requiredAccessOf } from '../app/required-access.js';
import { AuthService } from '../auth/auth.service.js';
import { ResourcesService } from '../auth/resources.service.js';
import { ApiError } from '../common/errors/api-error.js';
import { fromForeign } from '../common/errors/error-body.js';
import type { ResourceRef } from '../common/guard/access.decorators.js';
import type { RouteAction } from '../common/guard/access.js';
import { requestLog } from '../common/logging/request-logging.js';
import { isDatabaseUnavailable } from '../database/connection-failure.js';
import { ConsoleAnswers } from './console-answers.js';
import {
  assertSameOrigin,
  clearSessionCookie,
  CONSOLE_ACCESS,
  CONSOLE_OPEN,
  readForm,
  sessionCookieOf,
  setConsoleHeaders,
  SignInRequired,
  type ConsoleRequest,
} from './console-http.js';
import { ConsoleSessionsService } from './console-sessions.service.js';
import { Html } from './html.js';
import { errorScreen, page, Screen } from './views/layout.js';

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/**
 * The console's guard, in place of the API's key guard: refuses cross-site state changes, reads form
 * bodies, finds the session of the cookie, checks its key again through the auth service (revoked or
 * expired: every session of the key ends), and applies the route's permission by the API's own rule.
 * It leaves `principal` (and `requiredAccess`) on the request as the API guard does, so request logging,
 * request limits and auditing see the key.
 */
@Injectable()
export class ConsoleGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly sessions: ConsoleSessionsService,
    private readonly auth: AuthService,
    private readonly resources: ResourcesService,
    private readonly moduleRef: ModuleRef,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<ConsoleRequest>();
    setConsoleHeaders(context.switchToHttp().getResponse<Response>());
    if (!SAFE_METHODS.has(request.method)) {
      assertSameOrigin(request);
      request.form = await readForm(request);
    }
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(CONSOLE_OPEN, targets)) return true;

    const session = await this.sessions.resolve(sessionCookieOf(request));
    if (!session) throw new SignInRequired();
    try {
      request.principal = await this.auth.authenticateKeyId(session.keyId, request.ip);
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'Unauthorized') throw error;
      await this.sessions.endKey(session.keyId);
      throw new SignInRequired();
    }
    request.consoleSession = session;
    const rule = this.reflector.getAllAndOverride<{ resource: ResourceRef; action: RouteAction } | undefined>(CONSOLE_ACCESS, targets);
    if (rule) {
      const resource = await requiredAccessOf(this.resources, request.principal, rule.resource, rule.action, request.params, (type) =>
        this.moduleRef.get(type, { strict: false }),
      );
      if (resource) request.requiredAccess = { resource, action: rule.action };
    }
    return true;
  }
}

/** Handlers return a `Screen` (framed here as a whole page) or `Html` (a fragment); it goes out as UTF-8 HTML. */
@Injectable()
export class ConsoleHtmlInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<ConsoleRequest>();
    const response = context.switchToHttp().getResponse<Response>();
    return next.handle().pipe(
      map((result: unknown) => {
        const markup = result instanceof Screen ? page(request, result) : result;
        if (!(markup instanceof Html)) return markup;
        response.type('text/html; charset=utf-8');
        return markup.text;
      }),
    );
  }
}

/**
 * Every console error as a page (never JSON, never a stack): no session → the sign-in page; anything
 * else → its status with a short message (the API's message for its own errors, nothing for the rest).
 */
@Catch()
export class ConsoleErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Console');

  constructor(private readonly answers: ConsoleAnswers) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<ConsoleRequest>();
    const response = host.switchToHttp().getResponse<Response>();
    if (response.headersSent) {
      response.destroy();
      return;
    }
    setConsoleHeaders(response);
    for (const header of ['Content-Disposition', 'Content-Range', 'ETag', 'Accept-Ranges', 'Repr-Digest']) {
      response.removeHeader(header);
    }
    if (exception instanceof SignInRequired) {
      clearSessionCookie(response);
      this.send(this.answers.seeOther(request, response, '/console/sign-in'));
      return;
    }
    const error =
      exception instanceof ApiError
        ? exception
        : isDatabaseUnavailable(exception)
          ? new ApiError('ServiceUnavailable', 'the database does not answer; try again in a moment')
          : fromForeign(exception);
    if (!error) {
      const log = requestLog(request);
      if (log) log.error({ err: exception }, `${request.method} ${request.path} failed`);
      else this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    }
    const status = error?.status ?? (exception instanceof HttpException ? exception.getStatus() : 500);
    const message = error?.message ?? 'Something went wrong on our side. It has been logged.';
    this.send(this.answers.html(request, response, status, errorScreen(status, message)));
  }

  private send(answer: Promise<void>): void {
    answer.catch((error: unknown) => this.logger.error(`answering a console error failed: ${String(error)}`));
  }
}
