import { ApiError } from '../../common/errors/api-error.js';

/** Errors of a lookup's entries (the request itself fails only on a malformed body). */
export const LookupErrors = {
  answerTooLarge: (maxBytes: number) =>
    new ApiError(
      'RequestEntityTooLarge',
      `not looked up: the matches of the keys before it already fill the answer's ${maxBytes} bytes; ask for this key in another request`,
    ),
};
