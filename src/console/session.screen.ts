import { Inject, Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { AuthService } from '../auth/auth.service.js';
import { ApiError } from '../common/errors/api-error.js';
import { RESOURCE_ACTIONS, type Principal } from '../common/guard/access.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ConsoleAnswers } from './console-answers.js';
import { clearSessionCookie, setSessionCookie, type ConsoleRequest } from './console-http.js';
import { ConsoleSessionsService } from './console-sessions.service.js';
import { resourcePath, ResourceTree } from './resource-tree.js';
import type { Screen } from './views/layout.js';
import { homeView, signInView, type HomeModel } from './views/session.view.js';

/** Sign-in, sign-out and "what this key may do". */
@Injectable()
export class SessionScreen {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly answers: ConsoleAnswers,
    private readonly auth: AuthService,
    private readonly sessions: ConsoleSessionsService,
    private readonly tree: ResourceTree,
  ) {}

  /** The key is checked as an `X-Api-Key` header would be; a refused one gets the form again. */
  async signIn(request: ConsoleRequest, response: Response): Promise<void> {
    const key = request.form?.get('key')?.trim() ?? '';
    let principal;
    try {
      principal = await this.auth.authenticate({ 'x-api-key': key }, request.ip, 'api-key-only');
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'Unauthorized') throw error;
      return this.answers.html(request, response, 401, signInView('That API key is not valid: it is unknown, revoked or expired.'));
    }
    // The audit entry of the sign-in names the key.
    request.principal = principal;
    const value = await this.sessions.create(principal.keyId, principal.expiresAt);
    setSessionCookie(response, value, this.config.console.sessionMaxHours * 3600);
    await this.answers.seeOther(request, response, '/console');
  }

  async signOut(request: ConsoleRequest, response: Response): Promise<void> {
    await this.sessions.end(request.consoleSession!.id);
    clearSessionCookie(response);
    await this.answers.seeOther(request, response, '/console/sign-in');
  }

  async home(principal: Principal): Promise<Screen> {
    return homeView(await this.homeModel(principal));
  }

  private async homeModel(principal: Principal): Promise<HomeModel> {
    const nodes = await this.tree.read();
    return {
      keyId: principal.keyId,
      expiresAt: principal.expiresAt,
      permissions: nodes.flatMap((node) => {
        const actions = RESOURCE_ACTIONS.filter((action) => principal.hasDirect(node.id, action));
        return actions.length === 0 ? [] : [{ path: resourcePath(nodes, node), actions }];
      }),
      limits: principal.limits.map((limit) => ({
        path: resourcePath(
          nodes,
          nodes.find((node) => node.id === limit.resourceId),
        ),
        action: limit.action,
        limit: limit.limit,
      })),
    };
  }
}
