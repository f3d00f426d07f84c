import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { ListResourcesQueryDto, ResourceView } from './dto/resource.dto.js';
import { ResourcesService } from './resources.service.js';

@ApiTags('auth')
@Controller('auth/resources')
export class ResourcesController {
  constructor(private readonly resources: ResourcesService) {}

  @Get()
  @RequirePermission('auth', 'Read')
  @ApiOperation({
    summary: 'List protected resources',
    description:
      'Lists the resources permissions refer to, in id order. Without `parentID` only the top-level resources are ' +
      'listed (`auth` 1, `intel` 2, `insight` 3, `filebox` 4); with `parentID` the direct children of that resource: ' +
      '`parentID=2` lists one resource per collection, `parentID=3` lists `tasks` (5) and `task-queue` (6). Use the ' +
      'ids in the permissions and limits of new keys.',
  })
  @ApiOkResponse({ type: [ResourceView], description: 'A page; the next page is in `Link: rel="next"`.' })
  @ApiErrors({
    400: 'InvalidQueryArgument: a malformed `parentID`, `cursor` or `limit`.',
    422: 'ResourceNotFound: no resource has id `parentID`.',
  })
  list(@Query() query: ListResourcesQueryDto) {
    return this.resources.list(query);
  }
}
