/** The largest envelope (or STIX bundle) a POST may send: the API root's `max_content_length`. */
export const TAXII_MAX_CONTENT_LENGTH = 32 * 1024 * 1024;

/** Objects per page by default and at most (`limit`). */
export const TAXII_DEFAULT_LIMIT = 1000;
export const TAXII_MAX_LIMIT = 10_000;

/** The media types of a STIX bundle file. */
export const STIX_BUNDLE_TYPES = ['application/json', 'application/stix+json'];
