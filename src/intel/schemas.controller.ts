import { schemasControllerFor } from '../schema-registry/schemas.controller.js';

/** `/intel/schemas`: register, replace, view and list intel schemas (Read / Write on `intel`). */
export const SchemasController = schemasControllerFor('intel', 'SchemasController');
