import { ApiError } from '../common/errors/api-error.js';
import { AppValidationPipe } from '../common/validation/validation.pipe.js';

/** The API's own pipe, so a form obeys exactly the rules (and gets the messages) of the route's body DTO. */
const pipe = new AppValidationPipe();

/**
 * A console form, translated into the API's body shape, validated as the API validates that body: the DTO
 * instance, or the pipe's `InvalidData` refusal (its `details.errors` name each field that failed).
 * The translation only reshapes (lines to keys, names to nested fields); every rule is the DTO's.
 */
export async function validatedForm<T extends object>(type: new () => T, body: object): Promise<T> {
  return (await pipe.transform(body, { type: 'body', metatype: type })) as T;
}

/** A refused form: its status, the message for the page and the problems shown under the fields they concern. */
export interface Refusal {
  status: number;
  message: string;
  fields: Record<string, string>;
}

interface FieldError {
  field: string;
  problems: string[];
}

/**
 * The refusal a form post shows with the form again: an API error a client could cause (below 500); anything
 * else is thrown on to the console's error page. `fieldOf` names the form field that shows a body field's
 * problems (`params.schemaID` → `schemaID`); problems no field shows stay in the page's message.
 */
export function refusalOf(error: unknown, fieldOf: Record<string, string>): Refusal {
  if (!(error instanceof ApiError) || error.status >= 500) throw error;
  const fields: Record<string, string> = {};
  let unplaced = false;
  for (const { field, problems } of (error.details?.errors ?? []) as FieldError[]) {
    const prefix = Object.keys(fieldOf).find((name) => field === name || field.startsWith(`${name}.`) || field.startsWith(`${name}[`));
    if (prefix === undefined) {
      unplaced = true;
      continue;
    }
    const where = field.slice(prefix.length).replace(/^\./, '');
    const text = `${where && `${where}: `}${problems.join(', ')}`;
    const name = fieldOf[prefix];
    fields[name] = fields[name] ? `${fields[name]}; ${text}` : text;
  }
  const placed = Object.keys(fields).length > 0 && !unplaced;
  return { status: error.status, message: placed ? 'The form was not accepted: see the marked fields.' : error.message, fields };
}
