import { ValidateBy, type ValidationOptions } from 'class-validator';
import { rankOf, TLP_INPUT_HINT } from './tlp.js';

/**
 * A body member that must spell a TLP level as input may (`rankOf`: case-insensitive, `TLP:WHITE` for
 * `TLP:CLEAR`): the form's other members' 400 `InvalidData`, naming the member. The service then stores `rankOf(value)`.
 */
export const IsTlp = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'isTlp',
      validator: {
        validate: (value: unknown) => rankOf(value) !== undefined,
        defaultMessage: (args) => `${args?.property ?? 'the marking'} must be ${TLP_INPUT_HINT}`,
      },
    },
    options,
  );
