import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, ERROR_CODES, errorCodeSet, isErrorCode, ModelError, serializeError } from '../../src/errors.js';
import { decideFailure } from '../../src/run/failure-policy.js';

test('error codes are one sorted list without duplicates, and a serialized code is narrowed by it', () => {
  assert.deepEqual([...ERROR_CODES], [...ERROR_CODES].sort(), 'kept sorted, so a new code has one obvious line');
  assert.equal(new Set(ERROR_CODES).size, ERROR_CODES.length);
  for (const code of ERROR_CODES) assert.match(code, /^[a-z]+(_[a-z]+)*$/);
  assert.equal(isErrorCode(serializeError(new ModelError('401', { code: 'model_auth' })).code), true);
  assert.equal(
    isErrorCode(serializeError(Object.assign(new Error('gone'), { code: 'ENOENT' })).code),
    false,
    'a Node error keeps its own code',
  );
  assert.equal(errorCodeSet(['model_auth']).has('model_auth'), true);
});

test('a misspelt code does not compile (each @ts-expect-error fails the build when the line compiles)', () => {
  // @ts-expect-error a code that is not in ERROR_CODES
  const misspelt = new ConfigError('x', { code: 'confg_invalid' });
  const error: ConfigError = new ConfigError('x', { code: 'config_invalid' });
  // @ts-expect-error comparing against a code that does not exist
  const compared = error.code === 'modle_auth';
  // @ts-expect-error a set of codes is checked where it is written
  const set = errorCodeSet(['model_auht']);
  assert.equal(misspelt.code, 'confg_invalid', 'at run time the typo would pass silently: only the compiler stops it');
  assert.equal(compared, false);
  assert.equal(set.size, 1);
  assert.deepEqual(decideFailure(serializeError(error)), { action: 'fail', errorClass: 'input' });
});
