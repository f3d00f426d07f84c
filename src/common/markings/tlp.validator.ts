import { buildMessage, ValidateBy, type ValidationOptions } from 'class-validator';
import { rankOf, TLP_INPUT_HINT } from './tlp.js';

/**
 * A body member that names a TLP level as input may spell it (`rankOf`): anything else is refused by the
 * global pipe, 400 `InvalidData` naming the member, before a service sees it. Apart from tlp.ts, which the
 * pure parsers import too.
 */
export function IsTlp(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isTlp',
      validator: {
        validate: (value: unknown) => rankOf(value) !== undefined,
        defaultMessage: buildMessage((each) => `${each}$property must be ${TLP_INPUT_HINT}`, options),
      },
    },
    options,
  );
}
