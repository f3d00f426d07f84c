import { All, Controller } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../common/guard/access.decorators.js';
import { TaxiiController } from './taxii-docs.js';
import { TaxiiErrors } from './taxii.errors.js';

/**
 * Any other path or method under /taxii2: a TAXII 404, as every answer there is a TAXII message. Registered
 * after the TAXII controllers (TaxiiModule lists it last), so it only gets what they do not route.
 */
@ApiExcludeController()
@TaxiiController()
@Controller('taxii2')
export class TaxiiFallbackController {
  @All('*path')
  @Public()
  notFound(): never {
    throw TaxiiErrors.noSuchResource();
  }
}
