// The TypeORM CLI data source. `npm run typeorm -- <command>` runs the CLI on the compiled copy
// (dist/database/cli-data-source.js); TypeScript-aware runners can load this file directly.
export { default } from './src/database/cli-data-source.js';
