import { ApiError, CommonErrors, registerErrorCodes, type ErrorCodesOf } from '../common/errors/api-error.js';
import type { Warning } from './warninglist-matcher/index.js';

/** Warninglists' own error codes and their HTTP statuses, registered in the one table (common/errors/api-error.ts). */
export const WARNINGLISTS_ERROR_CODES = registerErrorCodes({ DuplicateWarninglist: 409, UnsupportedListType: 422, Warninglisted: 422 });
declare module '../common/errors/api-error.js' {
  interface ErrorStatusTable extends ErrorCodesOf<typeof WARNINGLISTS_ERROR_CODES> {}
}

export const WarninglistErrors = {
  notFound: (name: string) => new ApiError('NotFound', `no warninglist is named ${JSON.stringify(name)}`),
  duplicate: (name: string) => new ApiError('DuplicateWarninglist', `a warninglist named ${JSON.stringify(name)} exists`),
  badEntry: (position: number, reason: string) => CommonErrors.invalidData(`entries[${position}]: ${reason}`, { position }),
  /** Shaped as the validation pipe's field errors (`details.errors`), since it is one to the client. */
  nameNotPath: (path: string, body: string) => {
    const problem = `a PUT does not rename: name must be ${JSON.stringify(path)}, the path's, or left out (not ${JSON.stringify(body)})`;
    return CommonErrors.invalidData(`name: ${problem}`, { errors: [{ field: 'name', problems: [problem] }] });
  },
  tooManyEntries: (max: number) => CommonErrors.tooLarge(`a warninglist holds at most ${max} entries`),
  tooManyValues: (max: number) => CommonErrors.tooLarge(`a check takes at most ${max} values`),
  keyTypesNotFit: (kind: string, fit: readonly string[]) => CommonErrors.invalidData(`keyTypes of a ${kind} list must be among ${fit.join(', ')}`),
  badDocument: (reason: string) => CommonErrors.invalidData(`not a MISP warninglist: ${reason}`),
  unsupportedType: (type: string) =>
    new ApiError(
      'UnsupportedListType',
      `warninglists of type ${JSON.stringify(type)} are not supported (regex lists cannot be matched at the speed exports need)`,
    ),
  badValue: (position: number, reason: string) => CommonErrors.invalidData(`values[${position}]: ${reason}`, { position }),
  /** A write refused by a `rejectOnIngest` list: the list, entry and how it matched are in `details`. */
  warninglisted: (warning: Warning) =>
    new ApiError('Warninglisted', `refused by the warninglist ${warning.list} (${warning.match} match of ${JSON.stringify(warning.entry)})`, { warning }),
};
