import { randomBytes } from 'node:crypto';

/** A fresh CSP nonce: 16 random bytes from the OS CSPRNG, base64 (24 characters). Never Math.random. */
export function makeNonce(): string {
  return randomBytes(16).toString('base64');
}
