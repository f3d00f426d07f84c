import { ApiError, registerErrorCodes, type ErrorCodesOf } from '../common/errors/api-error.js';

/** Filebox's own error codes and their HTTP statuses, registered in the one table (common/errors/api-error.ts). */
export const FILEBOX_ERROR_CODES = registerErrorCodes({ InvalidState: 422, MissingFilePart: 422, InvalidFilePart: 422, InsufficientStorage: 507 });
declare module '../common/errors/api-error.js' {
  interface ErrorStatusTable extends ErrorCodesOf<typeof FILEBOX_ERROR_CODES> {}
}

export const FileboxErrors = {
  fileNotFound: () => new ApiError('NotFound', 'the file does not exist'),
  sessionNotFound: () => new ApiError('NotFound', 'the upload session does not exist'),
  sessionCompleted: () => new ApiError('InvalidState', 'the upload session is already completed'),
  tooLarge: (maxBytes: number) => new ApiError('RequestEntityTooLarge', `a file may hold at most ${maxBytes} bytes`, { maxBytes }),
  outOfSpace: () => new ApiError('InsufficientStorage', 'the file store is full; nothing of this upload was kept'),
  invalidField: (message: string) => new ApiError('InvalidData', message),
  expectedOneFile: () => new ApiError('InvalidData', 'the form must hold exactly one file field, named "file"'),
  emptyFile: () => new ApiError('InvalidData', 'the file is empty'),
  missingPart: (number: number) =>
    new ApiError('MissingFilePart', `part ${number} is missing: parts must be numbered 1..N without gaps`, {
      number,
    }),
  invalidPart: (number: number, size: number, partSize: number) =>
    new ApiError('InvalidFilePart', `part ${number} holds ${size} bytes; every part but the last must hold exactly ${partSize}`, { number, size, partSize }),
  malformedRange: () => new ApiError('BadRequest', 'Range must be a single range of the form bytes=<start>-<end>'),
  storageUnavailable: () => new ApiError('ServiceUnavailable', 'the file storage does not answer'),
  rangeNotSatisfiable: (total: number) =>
    new ApiError(
      'RangeNotSatisfiable',
      `the range selects no byte of the ${total}-byte file`,
      { size: total },
      {
        'Content-Range': `bytes */${total}`,
      },
    ),
};
