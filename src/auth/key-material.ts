import { createHash, randomBytes } from 'node:crypto';

/** decisions §2: 32 random bytes, base64url (43 characters). */
export function generateKeyValue(): string {
  return randomBytes(32).toString('base64url');
}

export function hashKeyValue(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Kept in clear to tell keys apart: 8 of 43 characters leave 210 random bits unknown. */
export function keyPrefix(value: string): string {
  return value.slice(0, 8);
}
