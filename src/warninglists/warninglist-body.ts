import express, { type RequestHandler } from 'express';

/** The routes of lists, for the body readers configureApp mounts ahead of the global JSON parser. */
export const WARNINGLISTS_ROUTE = '/intel/warninglists';
export const WARNINGLIST_IMPORT_ROUTE = '/intel/warninglists/import';

/** A list of a million entries is about 25 MB of JSON (extensions §15): these bodies may be up to 64 MiB. */
export const MAX_WARNINGLIST_BYTES = 64 * 1024 * 1024;

/** JSON bodies of the list routes, up to MAX_WARNINGLIST_BYTES (413 beyond). */
export function warninglistJsonReader(): RequestHandler {
  return express.json({ limit: MAX_WARNINGLIST_BYTES, type: ['application/json', 'application/*+json'] });
}

/** A MISP document as bytes (its SHA-256 is of the bytes as published), parsed by the service. */
export function warninglistImportReader(): RequestHandler {
  return express.raw({ type: () => true, limit: MAX_WARNINGLIST_BYTES });
}
