import { SetMetadata } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiError } from '../common/errors/api-error.js';
import type { ResourceRef } from '../common/guard/access.decorators.js';
import type { AccessRequest, RouteAction } from '../common/guard/access.js';
import type { ConsoleSession } from './console-sessions.service.js';

export const COOKIE_NAME = 'console_session';
export const COOKIE_PATH = '/console';
/** Largest form body the console reads (a pasted list of indicators is the large one). */
export const MAX_FORM_BYTES = 2 * 1024 * 1024;

/** What a console request carries once the console's guard let it through. */
export type ConsoleRequest = AccessRequest & { consoleSession?: ConsoleSession; form?: URLSearchParams };

/** No session (or an ended one): the error filter sends the browser to the sign-in page. */
export class SignInRequired extends Error {}

export const CONSOLE_OPEN = 'console-open';
export const CONSOLE_ACCESS = 'console-access';

/** A console route that needs no session (sign-in, assets). */
export const ConsoleOpen = () => SetMetadata(CONSOLE_OPEN, true);

/** The permission an API route of the same data requires, checked by the same rule (required-access.ts). */
export const ConsoleAccess = (resource: ResourceRef, action: RouteAction) => SetMetadata(CONSOLE_ACCESS, { resource, action });

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');

/** On every console answer, errors included. */
export function setConsoleHeaders(response: Response): void {
  response.setHeader('Content-Security-Policy', CSP);
  response.setHeader('X-Content-Type-Options', 'nosniff');
  response.setHeader('Referrer-Policy', 'no-referrer');
  response.setHeader('Cache-Control', 'no-store');
  response.setHeader('X-Frame-Options', 'DENY');
  response.setHeader('Vary', 'HX-Request');
}

/** Any request htmx sends (a boosted link or form included). */
export function isHtmx(request: Request): boolean {
  return request.headers['hx-request'] === 'true';
}

/** htmx asking for a fragment of a page (not a boosted navigation, which takes whole pages). */
export function wantsFragment(request: Request): boolean {
  return isHtmx(request) && request.headers['hx-boosted'] !== 'true';
}

export function sessionCookieOf(request: Request): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === COOKIE_NAME) return value.join('=');
  }
  return undefined;
}

export function setSessionCookie(response: Response, value: string, maxAgeSeconds: number): void {
  response.setHeader('Set-Cookie', `${COOKIE_NAME}=${value}; Path=${COOKIE_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; Secure; SameSite=Strict`);
}

export function clearSessionCookie(response: Response): void {
  response.setHeader('Set-Cookie', `${COOKIE_NAME}=; Path=${COOKIE_PATH}; Max-Age=0; HttpOnly; Secure; SameSite=Strict`);
}

/**
 * Cross-site request forgery: a state-changing request must come from a console page. Browsers say where a
 * request comes from in `Sec-Fetch-Site`; only `same-origin` passes. Without it (older browsers, scripts)
 * an `Origin` that is sent must name this host. `Origin: null` alone is refused; Chromium sends it on our
 * own form posts (Referrer-Policy: no-referrer) but then also sends `Sec-Fetch-Site: same-origin`.
 */
export function assertSameOrigin(request: Request): void {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined) {
    if (site !== 'same-origin') throw crossOrigin();
    return;
  }
  const origin = request.headers.origin;
  if (origin === undefined) return;
  let host: string | undefined;
  try {
    host = new URL(origin).host;
  } catch {
    host = undefined;
  }
  if (host === undefined || host === '' || host !== request.headers.host) throw crossOrigin();
}

function crossOrigin(): ApiError {
  return new ApiError('Forbidden', 'this form was sent from another site; open the console and send it from there');
}

/**
 * Reads an `application/x-www-form-urlencoded` body of at most MAX_FORM_BYTES. Past the limit the rest is
 * read and dropped (not left unread, nor the request destroyed), so that the answer still reaches the browser.
 */
export function readForm(request: Request): Promise<URLSearchParams> {
  const type = request.headers['content-type'] ?? '';
  if (!type.toLowerCase().startsWith('application/x-www-form-urlencoded')) return Promise.resolve(new URLSearchParams());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    request.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > MAX_FORM_BYTES) {
        tooLarge = true;
        chunks.length = 0;
        reject(new ApiError('RequestEntityTooLarge', `the form is larger than ${MAX_FORM_BYTES / 1024 / 1024} MiB: split a long paste into parts`));
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      if (!tooLarge) resolve(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
    });
    request.on('error', reject);
  });
}
