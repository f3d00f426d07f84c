import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { AuditService } from './audit.service.js';
import { AuditEntryView, ListAuditQueryDto } from './dto/audit.dto.js';

@ApiTags('auth')
@Controller('auth/audit')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @RequirePermission('auth', 'Read')
  @ApiOperation({
    summary: 'List audit entries',
    description:
      'Lists the audit trail newest first: one entry per request that changed something or was refused while ' +
      'trying (and per read with `AUDIT_READS=true`), with its time, key, request id, method, route template, ' +
      'target, status and client address; never a body, key, token or header value. Filters: `keyID`, `action` ' +
      '(`<method> <route template>`), `target` (itself or anything under it), `since` (inclusive) and `until` ' +
      '(exclusive). A page is a bare array; the next page, when there is one, is in `Link: <...>; rel="next"` and ' +
      'keeps the filters. Entries are kept for `AUDIT_RETENTION_DAYS`.',
  })
  @ApiOkResponse({ type: [AuditEntryView], description: 'A page; the next page is in `Link: rel="next"`.' })
  @ApiErrors({ 400: 'InvalidQueryArgument: a malformed filter, `cursor` or `limit`.' })
  list(@Query() query: ListAuditQueryDto) {
    return this.audit.list(query);
  }
}
