// Every area's error codes, registered: common/ keeps the table but names no area, each area's
// `<area>.errors.ts` registers its own codes when it is loaded. The wiring knows every area, so loading this
// file makes the table whole (the global filter does, before any answer; so do the tests that read it).
import '../auth/auth.errors.js';
import '../filebox/filebox.errors.js';
import '../insight/insight.errors.js';
import '../intel/export/export.errors.js';
import '../intel/import/import.errors.js';
import '../intel/intel.errors.js';
import '../intel/lookup/lookup.errors.js';
import '../intel/objects.errors.js';
import '../schema-registry/schema-registry.errors.js';
import '../scoring/scoring.errors.js';
import '../sightings/sightings.errors.js';
import '../sources/sources.errors.js';
import '../taxii/taxii.errors.js';
import '../warninglists/warninglists.errors.js';

export { ERROR_STATUS, type ErrorCode } from '../common/errors/api-error.js';
