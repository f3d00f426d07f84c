import { CommonErrors } from '../../common/errors/api-error.js';

/** Errors of exports (and of the export query). */
export const ExportErrors = {
  keyTypeNotTaken: (format: string) => CommonErrors.invalidQuery(`keyType applies to the txt and csv formats only; ${format} exports whole objects`),
  urlSchemeNotTaken: (format: string) => CommonErrors.invalidQuery(`urlScheme applies to the txt format only, not to ${format}`),
};
