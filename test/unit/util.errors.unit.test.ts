import * as assert from 'node:assert/strict';
import { ExpBenchError } from '../../src/core/errors';
import { errorMessage, errorReason } from '../../src/core/util/errors';

describe('util: errorMessage', function () {
  it('gives an Error its message, a string as it is, an object its string message, anything else through String()', () => {
    assert.equal(errorMessage(new Error('boom')), 'boom');
    assert.equal(errorMessage(new ExpBenchError('BAD_INPUT', '/a/file', 'bad')), '/a/file: bad');
    assert.equal(errorMessage('plain'), 'plain');
    assert.equal(errorMessage({ message: 'from an object', code: 'E' }), 'from an object');
    assert.equal(errorMessage({ message: 42 }), '[object Object]');
    assert.equal(errorMessage(undefined), 'undefined');
    assert.equal(errorMessage(null), 'null');
    assert.equal(errorMessage(7), '7');
    assert.equal(errorMessage(Object.assign(new Error(''), { stderr: 'x' })), '', 'an empty message stays empty');
  });

  it('never throws, also for a value whose toString throws', () => {
    const evil = { toString() { throw new Error('no'); } };
    assert.equal(errorMessage(evil), '(unprintable error)');
    assert.equal(errorMessage(Object.create(null)), '(unprintable error)');
  });
});

describe('util: errorReason', function () {
  it('drops the input an ExpBenchError about that same input starts with; keeps every other message whole', () => {
    assert.equal(errorReason(new ExpBenchError('BAD_INPUT', '/a/file', 'no such file'), '/a/file'), 'no such file');
    assert.equal(errorReason(new ExpBenchError('BAD_INPUT', '/a/other', 'no such file'), '/a/file'), '/a/other: no such file', 'another input stays named');
    assert.equal(errorReason(new Error('/a/file: looks alike'), '/a/file'), '/a/file: looks alike', 'a plain Error is not trusted to name its input');
    assert.equal(errorReason('plain', '/a/file'), 'plain');
  });
});
