/** A full git object id: 40 hex digits (SHA-1) or 64 (SHA-256), lower case. */
export const FULL_SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
