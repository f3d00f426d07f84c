/**
 * Named parameters for a long statement: the SQL text names each value (`${p.$.contexts}::text[]`) instead
 * of a hand-numbered `$14`, and the values are given as a record the compiler checks against the same
 * names (a missing or misspelt one is a type error), turned into pg's positional list in one place. The
 * text PostgreSQL receives is unchanged: `$n` by the position of the name in the list.
 */
export class NamedParameters<Name extends string> {
  /** The placeholder (`$n`) of each name, for the statement's text. */
  readonly $: { readonly [N in Name]: string };

  constructor(private readonly names: readonly Name[]) {
    this.$ = Object.fromEntries(names.map((name, at) => [name, `$${at + 1}`])) as { [N in Name]: string };
  }

  /** These names and then `more` (a fragment's own, such as the read policy's conditions), numbered after them. */
  with<More extends string>(more: readonly More[]): NamedParameters<Name | More> {
    return new NamedParameters<Name | More>([...this.names, ...more]);
  }

  /** The values in the order of the placeholders. */
  values(named: { readonly [N in Name]: unknown }): unknown[] {
    return this.names.map((name) => named[name]);
  }
}

/** `new NamedParameters(names)`, keeping the names as a union of literals (`const`). */
export function namedParameters<const Name extends string>(names: readonly Name[]): NamedParameters<Name> {
  return new NamedParameters(names);
}
