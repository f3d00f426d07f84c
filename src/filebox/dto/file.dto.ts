import { ApiProperty } from '@nestjs/swagger';

export class FileRefView {
  @ApiProperty({ format: 'uuid' })
  fileID: string;
}

/** OpenAPI description of the direct upload form (the body is parsed by streaming, not by a DTO). */
export const FILE_UPLOAD_FORM = {
  schema: {
    type: 'object',
    required: ['file'],
    properties: { file: { type: 'string', format: 'binary', description: 'The file; its name is kept.' } },
  },
};

const header = (description: string, type: 'string' | 'integer' = 'string') => ({ description, schema: { type } });

/** Headers of HEAD and GET on file content (decisions §10). */
export const REPRESENTATION_HEADERS = {
  'Accept-Ranges': header('`bytes`.'),
  ETag: header('Strong tag: the hex SHA-256 of the content, quoted.'),
  'Repr-Digest': header('`sha-256=:<base64>:, sha-512=:<base64>:` of the whole file.'),
};

export const HEAD_CONTENT_HEADERS = {
  'Content-Length': header('The file size in bytes.', 'integer'),
  ...REPRESENTATION_HEADERS,
};

export const RANGE_CONTENT_HEADERS = {
  'Content-Range': header('`bytes <start>-<end>/<total>`: the served span (end clamped to the last byte, span cut to 50 MiB).'),
  'Content-Length': header('The number of bytes in the body.', 'integer'),
  ...REPRESENTATION_HEADERS,
};

/** A response body of raw file bytes. */
export const FILE_CONTENT = { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } };
