// The worker thread of offThread.ts: does one task and posts its result (or its error) once.
import { parentPort, workerData } from 'node:worker_threads';
import { ExpBenchError } from '../errors';
import { errorMessage } from '../util/errors';
import { judgeSession } from './judge';
import type { OffThreadTask } from './offThread';

async function run(task: OffThreadTask): Promise<unknown> {
  switch (task.kind) {
    case 'judge': {
      const r = await judgeSession(task.sessionDir, task.opts);
      return { record: r.record, file: r.file, failedFile: r.failedFile, keptLatest: r.keptLatest };
    }
  }
}

run(workerData as OffThreadTask).then(
  (value) => parentPort!.postMessage({ ok: true, value }),
  (e: unknown) => parentPort!.postMessage(e instanceof ExpBenchError
    ? { ok: false, code: e.code, input: e.input, message: e.message }
    : { ok: false, message: errorMessage(e) }),
);
