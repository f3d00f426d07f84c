/**
 * The matcher's old path, kept so that importers not yet moved to `./warninglist-matcher/index.js` (the
 * folder's one door) keep compiling while other areas are changed in parallel (issue 44): it adds nothing.
 * Delete it once no file imports `warninglist-matcher.js` (today: src/intel/lookup/lookup.service.ts).
 */
export * from './warninglist-matcher/index.js';
