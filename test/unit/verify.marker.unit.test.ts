/**
 * The changed files of a run are those `find -newer <marker>` lists. File times come from the
 * kernel's coarse clock, so a file written in the marker's own tick is not "newer": with a plain
 * `touch`, most files written right after it were missed (here 129 of 200), and a fast command's
 * output dropped out of the record and the claims check (the failure seen once in `curate validate`'s
 * test). `touchMarker` waits out the tick; real bash, real files.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { touchMarker } from '../../src/core/verify/container-io';

describe('verify: the marker the changed files are found against', function () {
  this.timeout(120_000);
  it('a file written right after touchMarker is always newer than the marker (200 tries in real bash); one written before it never is', () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-marker-'));
    try {
      const script = `misses=0; early=0; for i in $(seq 1 200); do echo a > ${d}/before; ${touchMarker(`${d}/m`)}; echo x > ${d}/f; [ -n "$(find ${d}/f -newer ${d}/m)" ] || misses=$((misses+1)); [ -z "$(find ${d}/before -newer ${d}/m)" ] || early=$((early+1)); done; echo "$misses $early"; ls ${d}`;
      const [out, ...listed] = execFileSync('bash', ['-c', script], { encoding: 'utf8' }).trim().split('\n');
      assert.equal(out, '0 0', 'missed after, counted before');
      assert.deepEqual(listed.sort(), ['before', 'f', 'm'], 'the tick file is removed');
    } finally {
      fs.rmSync(d, { recursive: true, force: true });
    }
  });
});
