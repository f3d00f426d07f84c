import { html } from '../html.js';
import { alert, dataTable, dateOf } from './components.js';
import type { GrantLine, LimitLine } from './keys.view.js';
import { Screen } from './layout.js';

export function signInView(message?: string): Screen {
  return new Screen(
    'Sign in',
    html`${alert(message)}
<form method="post" action="/console/sign-in" class="stack">
<label for="key">API key</label>
<input id="key" name="key" type="password" autocomplete="off" required maxlength="256" spellcheck="false">
<button type="submit">Sign in</button>
</form>
<p>The key stays on the server: the browser only holds a session cookie, which ends when you sign out, after a
while unused, or when the key is revoked or expires.</p>`,
  );
}

export interface HomeModel {
  keyId: number;
  expiresAt: Date | null;
  permissions: GrantLine[];
  limits: LimitLine[];
}

/** "What this key may do": the signed-in key, its permissions by resource, its daily limits. */
export function homeView({ keyId, expiresAt, permissions, limits }: HomeModel): Screen {
  return new Screen(
    'What this key may do',
    html`<p>Signed in as API key ${keyId}${expiresAt ? html`, which expires ${dateOf(expiresAt)}` : ''}.
Every screen shows only what this key may read, by the same rules as the API.</p>
${
  permissions.length === 0
    ? html`<p>This key holds no permissions.</p>`
    : dataTable({
        caption: 'Permissions',
        rows: permissions,
        columns: [
          { header: 'Resource', cell: (grant) => grant.path },
          { header: 'Actions', cell: (grant) => grant.actions.join(', ') },
        ],
      })
}
${
  limits.length > 0 &&
  dataTable({
    caption: 'Daily request limits',
    rows: limits,
    columns: [
      { header: 'Resource', cell: (limit) => limit.path },
      { header: 'Action', cell: (limit) => limit.action },
      { header: 'Limit', cell: (limit) => limit.limit },
    ],
  })
}`,
  );
}
