import { CreateAuth1763800000000 } from './1763800000000-CreateAuth.js';

/**
 * Every committed migration, in order. Listed explicitly (not globbed) so that the compiled service,
 * the TypeORM CLI and the ESM test runner all load the same set.
 */
export const MIGRATIONS = [CreateAuth1763800000000];
