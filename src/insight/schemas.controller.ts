import { schemasControllerFor } from '../schema-registry/schemas.controller.js';

/** `/insight/schemas`: register, replace, view and list insight schemas (Read / Write on `insight`). */
export const InsightSchemasController = schemasControllerFor('insight', 'InsightSchemasController');
