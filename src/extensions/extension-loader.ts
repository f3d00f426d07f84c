import { pathToFileURL } from 'node:url';
import type { DynamicModule, Type } from '@nestjs/common';

/** The settings an extension reads: every `EXT_*` variable of the service's environment. */
export const EXTENSION_SETTINGS = Symbol('EXTENSION_SETTINGS');
export type ExtensionSettings = Readonly<Record<string, string>>;

function isDynamicModule(value: unknown): value is DynamicModule {
  return typeof value === 'object' && value !== null && typeof (value as DynamicModule).module === 'function';
}

/**
 * Imports one extension file named by EXTENSIONS: an ES module whose default export is a Nest module
 * class or a dynamic module. Start-up fails with a message naming the file when it is anything else.
 */
export async function loadExtension(path: string): Promise<DynamicModule> {
  let exported: unknown;
  try {
    exported = ((await import(pathToFileURL(path).href)) as { default?: unknown }).default;
  } catch (error) {
    throw new Error(`EXTENSIONS: ${path} could not be loaded: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (isDynamicModule(exported)) return exported;
  if (typeof exported === 'function') return { module: exported as Type };
  throw new Error(`EXTENSIONS: ${path} must default-export a Nest module class (or a dynamic module)`);
}
