// The message of a thrown value lives beside ExpBenchError (src/core/errors.ts), so that the rooms
// below util (untrusted) can use it too; most callers import it from here.
export { errorMessage, errorReason } from '../errors';
