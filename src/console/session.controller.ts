import { Get, Inject, Post, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { AuthService } from '../auth/auth.service.js';
import { ApiError } from '../common/errors/api-error.js';
import { RESOURCE_ACTIONS } from '../common/guard/access.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ConsoleController } from './console-controller.js';
import { ConsoleAnswers } from './console-answers.js';
import { clearSessionCookie, ConsoleOpen, type ConsoleRequest, setSessionCookie } from './console-http.js';
import { ConsoleSessionsService } from './console-sessions.service.js';
import { html, type Html } from './html.js';
import { resourcePath, ResourceTree } from './resource-tree.js';
import { alertOf, dateOf, page } from './views/layout.js';

@ConsoleController('')
export class SessionController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly answers: ConsoleAnswers,
    private readonly auth: AuthService,
    private readonly sessions: ConsoleSessionsService,
    private readonly tree: ResourceTree,
  ) {}

  @Get('sign-in')
  @ConsoleOpen()
  signInPage(@Req() request: ConsoleRequest): Html {
    return signInForm(request);
  }

  @Post('sign-in')
  @ConsoleOpen()
  async signIn(@Req() request: ConsoleRequest, @Res() response: Response): Promise<void> {
    const key = request.form?.get('key')?.trim() ?? '';
    let principal;
    try {
      principal = await this.auth.authenticate({ 'x-api-key': key }, request.ip, 'api-key-only');
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'Unauthorized') throw error;
      return this.answers.html(request, response, 401, signInForm(request, 'That API key is not valid: it is unknown, revoked or expired.'));
    }
    // The audit entry of the sign-in names the key.
    request.principal = principal;
    const value = await this.sessions.create(principal.keyId, principal.expiresAt);
    setSessionCookie(response, value, this.config.console.sessionMaxHours * 3600);
    await this.answers.seeOther(request, response, '/console');
  }

  @Post('sign-out')
  async signOut(@Req() request: ConsoleRequest, @Res() response: Response): Promise<void> {
    await this.sessions.end(request.consoleSession!.id);
    clearSessionCookie(response);
    await this.answers.seeOther(request, response, '/console/sign-in');
  }

  @Get()
  async home(@Req() request: ConsoleRequest): Promise<Html> {
    const principal = request.principal!;
    const nodes = await this.tree.read();
    const held = nodes.flatMap((node) => {
      const actions = RESOURCE_ACTIONS.filter((action) => principal.hasDirect(node.id, action));
      return actions.length === 0 ? [] : [{ node, actions }];
    });
    return page(
      request,
      'What this key may do',
      html`<p>Signed in as API key ${principal.keyId}${principal.expiresAt ? html`, which expires ${dateOf(principal.expiresAt)}` : ''}.
Every screen shows only what this key may read, by the same rules as the API.</p>
${
  held.length === 0
    ? html`<p>This key holds no permissions.</p>`
    : html`<table><caption>Permissions</caption><thead><tr><th scope="col">Resource</th><th scope="col">Actions</th></tr></thead>
<tbody>${held.map(({ node, actions }) => html`<tr><td>${resourcePath(nodes, node)}</td><td>${actions.join(', ')}</td></tr>`)}</tbody></table>`
}
${
  principal.limits.length > 0 &&
  html`<table><caption>Daily request limits</caption><thead><tr><th scope="col">Resource</th><th scope="col">Action</th><th scope="col">Limit</th></tr></thead>
<tbody>${principal.limits.map(
    (limit) =>
      html`<tr><td>${resourcePath(nodes, nodes.find((node) => node.id === limit.resourceId))}</td><td>${limit.action}</td><td>${limit.limit}</td></tr>`,
  )}</tbody></table>`
}`,
    );
  }
}

function signInForm(request: ConsoleRequest, message?: string): Html {
  return page(
    request,
    'Sign in',
    html`${alertOf(message)}
<form method="post" action="/console/sign-in" class="stack">
<label for="key">API key</label>
<input id="key" name="key" type="password" autocomplete="off" required maxlength="256" spellcheck="false">
<button type="submit">Sign in</button>
</form>
<p>The key stays on the server: the browser only holds a session cookie, which ends when you sign out, after a
while unused, or when the key is revoked or expires.</p>`,
  );
}
