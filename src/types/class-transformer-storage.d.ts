// class-transformer keeps its decorators' metadata in a singleton it does not export from its index; the
// compiled validation (src/common/validation/compiled-validation.ts) reads it from the same CommonJS module.

declare module 'class-transformer/cjs/storage.js' {
  import type { MetadataStorage } from 'class-transformer/types/MetadataStorage.js';

  export const defaultMetadataStorage: MetadataStorage;
}
