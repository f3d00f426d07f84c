import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { BufferPool } from './buffer-pool.js';

interface ObjectParams {
  Bucket: string;
  Key: string;
  ContentType: string;
  Body: Readable;
}

/**
 * Content of unknown length into one object, holding one part in memory: the part is filled from the
 * stream, sent, and only then is the stream read on (one part in flight, backpressure meanwhile). Content
 * shorter than a part is one PutObject. Any failure aborts the multipart upload, so no parts are left
 * behind; an abort of `signal` stops the request in flight. The part is copied into a pooled buffer,
 * not gathered and concatenated into a fresh 5 MiB Buffer per part as `@aws-sdk/lib-storage` does (two
 * 50 MiB uploads at a time grew the service by +121 MiB with those).
 */
export async function uploadInParts(client: S3Client, params: ObjectParams, buffers: BufferPool, signal: AbortSignal): Promise<void> {
  const { Bucket, Key, ContentType, Body: content } = params;
  const part = buffers.take();
  const parts: CompletedPart[] = [];
  let uploadId: string | undefined;
  let filled = 0;
  // A buffer whose request failed may still be referenced by a socket being torn down: never reused.
  let reusable = false;

  const sendPart = async (): Promise<void> => {
    uploadId ??= (await client.send(new CreateMultipartUploadCommand({ Bucket, Key, ContentType }), { abortSignal: signal })).UploadId;
    const PartNumber = parts.length + 1;
    const Body = part.subarray(0, filled);
    const { ETag } = await client.send(new UploadPartCommand({ Bucket, Key, UploadId: uploadId, PartNumber, Body, ContentLength: filled }), {
      abortSignal: signal,
    });
    parts.push({ PartNumber, ETag });
    filled = 0;
  };

  try {
    for await (const chunk of content as AsyncIterable<Buffer>) {
      for (let offset = 0; offset < chunk.length;) {
        const copied = chunk.copy(part, filled, offset);
        filled += copied;
        offset += copied;
        if (filled === part.length) await sendPart();
      }
    }
    if (uploadId === undefined) {
      const Body = part.subarray(0, filled);
      await client.send(new PutObjectCommand({ Bucket, Key, ContentType, Body, ContentLength: filled }), { abortSignal: signal });
    } else {
      if (filled > 0) await sendPart();
      await client.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId: uploadId, MultipartUpload: { Parts: parts } }), { abortSignal: signal });
    }
    reusable = true;
  } catch (error) {
    if (uploadId !== undefined) {
      await client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId: uploadId })).catch(() => undefined);
    }
    throw error;
  } finally {
    if (reusable) buffers.give(part);
  }
}
