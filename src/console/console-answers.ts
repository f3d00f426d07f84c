import { Injectable, Optional } from '@nestjs/common';
import type { Response } from 'express';
import { AuditTrail } from '../audit/audit-trail.js';
import { isHtmx, type ConsoleRequest } from './console-http.js';
import type { Html } from './html.js';
import { page, Screen } from './views/layout.js';

/** How a screen answers a form post: on to another page (303), or a page with a status (a result, a refused form). */
export type FormAnswer = { seeOther: string; created?: object } | { status: number; screen: Screen; created?: object };

/**
 * Answers the console writes itself (redirects, re-rendered forms, errors). Like the API's, an audited
 * request is answered only once its audit entry is stored; the global audit interceptor then finds it
 * recorded. `created` names what a write made (`{ id }`, `{ taskID }`, `{ fileID }`) for the entry's target.
 */
@Injectable()
export class ConsoleAnswers {
  /** Absent only where the audit trail is not part of the application. */
  constructor(@Optional() private readonly audit?: AuditTrail) {}

  async html(request: ConsoleRequest, response: Response, status: number, body: Html | Screen, created?: object): Promise<void> {
    await this.audited(request, status, created);
    response
      .status(status)
      .type('text/html; charset=utf-8')
      .send((body instanceof Screen ? page(request, body) : body).text);
  }

  form(request: ConsoleRequest, response: Response, answer: FormAnswer): Promise<void> {
    return 'seeOther' in answer
      ? this.seeOther(request, response, answer.seeOther, answer.created)
      : this.html(request, response, answer.status, answer.screen, answer.created);
  }

  /** To `location` after a form: a 303, or for htmx a full navigation (new head, new cookie). */
  async seeOther(request: ConsoleRequest, response: Response, location: string, created?: object): Promise<void> {
    const htmx = isHtmx(request);
    await this.audited(request, htmx ? 200 : 303, created);
    if (htmx) {
      response.setHeader('HX-Redirect', location);
      response.status(200).end();
    } else {
      response.redirect(303, location);
    }
  }

  /** A failure to store the entry was logged by the trail; the answer goes out anyway, as the API's refusals do. */
  private async audited(request: ConsoleRequest, status: number, created?: object): Promise<void> {
    await this.audit?.afterOutcome(request, status, created)?.catch(() => undefined);
  }
}
