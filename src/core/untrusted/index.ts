// The untrusted room: the one seam through which the host reads what the solver's side can write
// (the workspace and its files, run logs, patches, notes and drafts, channel and MCP lines). It
// never blocks on a special file, never follows a link out of the folder it reads in, and never
// takes more than the limits of limits.ts; its errors name the input. It imports only `errors`,
// so every room above may use it (eslint/layers.mjs, docs/architecture.md).
export { fileError, kindOf, notAFile, outside, tooLarge } from './errors';
export { LIMITS, assertTextWithin, jsonLength } from './limits';
export {
  copyUntrusted, isInside, openRegular, openUntrusted, readRegularFile, readUntrusted, readUntrustedText, readUntrustedWindow, regularFileStat,
  type UntrustedOpenOptions, type UntrustedReadOptions, type WindowRead,
} from './read';
export { entryKind, isSpecial, kindWords, linkTarget, specialReason, walkEntries, type EntryKind, type SkippedEntry, type WalkedEntry } from './entries';
export { ByteLines, HEAD_UNITS, TextLines, type LineHandlers } from './lines';
export { hasControl, hasLineTerminator, isSpace, printable, printableLines, trimEndOf, trimStartOf } from './text';
