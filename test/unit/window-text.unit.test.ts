// Issue 15, the window's words: pluralisation, the clock bar, task rows, the brief's markdown,
// errors without command lines, and when an idle work container is stopped. Pure functions, no I/O.
import * as assert from 'node:assert/strict';
import { ExpBenchError } from '../../src/core/errors';
import { plural } from '../../src/core/util/plural';
import { errorInWords } from '../../src/extension/errorWords';
import { IdleTracker } from '../../src/extension/session/idle';
import { taskLabel } from '../../src/extension/taskLabel';
import { clockText } from '../../webview-ui/src/clockText';
import { renderMarkdown } from '../../webview-ui/src/markdown';

describe('window text (issue 15)', () => {
  it('plural: 1 file, 0 files, 2 files, irregular forms', () => {
    assert.equal(plural(1, 'file'), '1 file');
    assert.equal(plural(0, 'file'), '0 files');
    assert.equal(plural(2, 'problem'), '2 problems');
    assert.equal(plural(1, 'ignored build output'), '1 ignored build output');
    assert.equal(plural(3, 'this', 'these'), '3 these');
  });

  it('clock: "not started" before the first start, "submitted" / "gave up" once finished, "paused" only when paused', () => {
    const clock = (status: string, workingMs = 0, budgetMs: number | null = null) => ({ status, workingMs, budgetMs });
    assert.equal(clockText(clock('not-started'), null), 'Working time 0:00 (not started)');
    assert.equal(clockText(clock('running', 65_000), null), 'Working time 1:05');
    assert.equal(clockText(clock('paused', 65_000, 3_600_000), null), 'Working time 1:05 / 1:00:00 (paused)');
    assert.equal(clockText(clock('stopped', 3_723_000), 'submitted'), 'Working time 1:02:03 (submitted)');
    assert.equal(clockText(clock('stopped', 0), 'gaveUp'), 'Working time 0:00 (gave up)');
    // a session submitted with the clock never started is "submitted", not "not started"
    assert.equal(clockText(clock('not-started'), 'submitted'), 'Working time 0:00 (submitted)');
  });

  it('clock: the agent\'s and the person\'s share once an agent has worked, in whole seconds that add up to the total', () => {
    const clock = (status: string, workingMs: number, agent: number, budgetMs: number | null = null) => ({ status, workingMs, budgetMs, byActor: { human: workingMs - agent, agent } });
    assert.equal(clockText(clock('running', 12_400, 9_700), null), 'Working time 0:12 (agent 0:09, you 0:03)');
    assert.equal(clockText(clock('paused', 65_000, 65_000, 3_600_000), null), 'Working time 1:05 / 1:00:00 (agent 1:05, you 0:00; paused)');
    assert.equal(clockText(clock('stopped', 3_723_000, 3_000_000), 'submitted'), 'Working time 1:02:03 (agent 50:00, you 12:03; submitted)');
    // a person's session (no agent time) keeps its plain line
    assert.equal(clockText(clock('running', 65_000, 0), null), 'Working time 1:05');
    assert.equal(clockText({ status: 'running', workingMs: 65_000, budgetMs: null }, null), 'Working time 1:05');
  });

  it('task row label: index, type, no_answer, problems and status first', () => {
    assert.equal(taskLabel({ index: 0, type: 1, noAnswer: false }, 'not-started', 0), '0 · T1');
    assert.equal(taskLabel({ index: 3, type: 2, noAnswer: true }, 'in-progress', 2), '3 · T2 · no_answer · ⚠2 · in progress');
    assert.equal(taskLabel({ index: 1, type: 3, noAnswer: false }, 'submitted', 0), '1 · T3 · submitted');
    assert.equal(taskLabel({ index: 1, type: 3, noAnswer: false }, 'opened', 0), '1 · T3 · opened');
  });

  it('markdown: `*` inside formulas stays a `*`; emphasis delimited by spaces or punctuation still works', () => {
    const formula = renderMarkdown('Use f + 0.2*sin(2*pi*f) as the signal.');
    assert.doesNotMatch(formula, /<em>/);
    assert.match(formula, /f \+ 0\.2\*sin\(2\*pi\*f\)/);
    assert.doesNotMatch(renderMarkdown('a*b*c and x**2**y'), /<(em|strong)>/);
    assert.match(renderMarkdown('this is *important* and **bold**.'), /<em>important<\/em> and <strong>bold<\/strong>\./);
    assert.match(renderMarkdown('(*note*)'), /\(<em>note<\/em>\)/);
    assert.match(renderMarkdown('`2*x*y`'), /<code>2\*x\*y<\/code>/);
    // raw HTML stays escaped (untrusted task text)
    assert.match(renderMarkdown('<script>x</script>'), /&lt;script&gt;/);
  });

  it('errors in words: git\'s own message, no command line', () => {
    const e = new ExpBenchError('SOURCE_UNAVAILABLE', 'https://github.com/x/y',
      "cannot clone: git -c protocol.file.allow=always clone --bare --no-tags -- https://github.com/x/y /tmp/c/y.tmp failed (exit 128): Cloning into bare repository '/tmp/c/y.tmp'...\nfatal: unable to access 'https://github.com/x/y/': Could not resolve host: github.com");
    const words = errorInWords(e);
    assert.equal(words, "the repository https://github.com/x/y could not be fetched (unable to access 'https://github.com/x/y/': Could not resolve host: github.com)");
    assert.doesNotMatch(words, /clone --bare|exit 128/);
    assert.equal(errorInWords(new ExpBenchError('BAD_INPUT', '/tmp/s', 'is not empty')), '/tmp/s: is not empty');
    assert.equal(errorInWords(new ExpBenchError('GIT_FAILED', '/w', 'git status --porcelain failed (exit 1): ')), '/w: git exited with status 1');
  });

  it('idle tracker: stops after the timeout without a running exec, counts again after a busy check, never when off', () => {
    const t = new IdleTracker();
    const min = 60_000;
    assert.equal(t.observe('c', false, 0, 30 * min), false, 'first idle sighting starts the count');
    assert.equal(t.observe('c', false, 29 * min, 30 * min), false);
    assert.equal(t.observe('c', true, 29.5 * min, 30 * min), false, 'busy resets');
    assert.equal(t.observe('c', false, 30 * min, 30 * min), false);
    assert.equal(t.observe('c', false, 59 * min, 30 * min), false);
    assert.equal(t.observe('c', false, 60 * min, 30 * min), true);
    assert.equal(t.observe('d', false, 0, 0), false);
    assert.equal(t.observe('d', false, 1e9, 0), false, '0 minutes: never');
    t.keepOnly([]);
    assert.equal(t.observe('c', false, 1e9, 30 * min), false, 'a forgotten container counts from zero');
  });
});
