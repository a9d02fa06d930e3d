import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { APIConnectionError } from '../../src/model/openai-sdk.js';
import { ConfigError, DatasetError, ModelError, RunError, SandboxError, serializeError } from '../../src/errors.js';
import { modelErrorFor } from '../../src/model/failure.js';
import { CircuitBreaker } from '../../src/run/circuit-breaker.js';
import { readDataset } from '../../src/dataset/index.js';
import { decideFailure } from '../../src/run/failure-policy.js';
import { RunStore } from '../../src/run/store.js';
import { openDatabase } from '../../src/util/sqlite.js';
import { temporaryDirectory } from '../helpers/cli.js';

const where = { baseURL: 'http://127.0.0.1:1/v1', model: 'm' };
const decide = (error: Error) => decideFailure(serializeError(error));

test('decideFailure: run-level faults, agent outcomes, faults that repeat and transient ones', () => {
  for (const code of [
    'model_auth',
    'api_key_missing',
    'model_not_found',
    'model_unreachable',
    'model_rate_limited',
  ] as const) {
    assert.deepEqual(
      decide(new ModelError('x', { code, retryable: code === 'model_unreachable' || code === 'model_rate_limited' })),
      { action: 'run_fault', errorClass: 'run' },
      code,
    );
  }
  assert.equal(
    decide(new ConfigError('no key', { code: 'api_key_missing' })).action,
    'run_fault',
    'by code, whatever the class',
  );
  assert.equal(decide(new SandboxError('no image', { code: 'image_missing' })).action, 'run_fault');
  assert.equal(
    decide(new SandboxError('no engine', { code: 'engine_unreachable', retryable: true })).action,
    'run_fault',
  );
  assert.deepEqual(decide(new ModelError('too long', { code: 'context_overflow' })), {
    action: 'agent',
    errorClass: 'agent',
  });
  assert.deepEqual(
    decide(new ConfigError('bad schema', { code: 'config_invalid', retryable: true })),
    { action: 'fail', errorClass: 'input' },
    'a config error repeats even if flagged retryable',
  );
  assert.deepEqual(decide(new DatasetError('bad row', { code: 'dataset_row_invalid' })), {
    action: 'fail',
    errorClass: 'input',
  });
  assert.deepEqual(decide(new ModelError('503', { code: 'model_unavailable', retryable: true })), {
    action: 'retry',
    errorClass: 'infra',
  });
  assert.deepEqual(decide(new SandboxError('flaky', { code: 'create_failed', retryable: true })), {
    action: 'retry',
    errorClass: 'infra',
  });
  assert.deepEqual(decide(new ModelError('400', { code: 'model_request_rejected' })), {
    action: 'fail',
    errorClass: 'infra',
  });
  assert.deepEqual(decide(new RunError('slow', { code: 'rollout_timeout', retryable: true })), {
    action: 'retry',
    errorClass: 'infra',
  });
  assert.deepEqual(
    decide(new TypeError('a bug')),
    { action: 'fail', errorClass: 'infra' },
    'an internal error is not retried blindly',
  );
});

test('modelErrorFor: 401/403 model_auth, 404 model_not_found, refused connections model_unreachable, a context overflow its own code', () => {
  const fatal = (status: number, message: string) =>
    modelErrorFor({ kind: 'fatal', status, message, cause: undefined }, 1, where);
  assert.equal(fatal(401, 'Incorrect API key provided').code, 'model_auth');
  assert.match(fatal(401, 'Incorrect API key provided').message, /HTTP 401: Incorrect API key provided/);
  assert.equal(fatal(403, 'forbidden').code, 'model_auth');
  assert.equal(fatal(404, 'The model `gpt-9` does not exist').code, 'model_not_found');
  const overflow = fatal(
    400,
    "This model's maximum context length is 4096 tokens. However, your messages resulted in 9120 tokens.",
  );
  assert.equal(overflow.code, 'context_overflow');
  assert.equal(overflow.retryable, false);
  assert.equal(fatal(400, "Unsupported parameter: 'top_k'").code, 'model_request_rejected');
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
  const unreachable = modelErrorFor(
    {
      kind: 'retryable',
      message: 'Connection error. (ECONNREFUSED)',
      cause: new APIConnectionError({ cause: refused }),
    },
    7,
    where,
  );
  assert.equal(unreachable.code, 'model_unreachable');
  assert.match(unreachable.message, /unreachable after 7 attempts/);
  assert.equal(
    modelErrorFor({ kind: 'retryable', status: 503, message: 'down', cause: undefined }, 3, where).code,
    'model_unavailable',
  );
});

test('the circuit breaker trips on a streak of model_unavailable with nothing landing in between', () => {
  const breaker = new CircuitBreaker(3);
  const item = (key: string) => ({ key, sample: 0 });
  assert.equal(breaker.observe('model_unavailable', item('a')), undefined);
  assert.equal(breaker.observe('model_unavailable', item('b')), undefined);
  assert.equal(breaker.observe(null, item('c')), undefined, 'a success resets the streak');
  assert.equal(breaker.observe('model_unavailable', item('d')), undefined);
  assert.equal(breaker.observe('rollout_timeout', item('e')), undefined, 'another failure resets it too');
  breaker.observe('model_unavailable', item('f'));
  breaker.observe('model_unavailable', item('g'));
  assert.deepEqual(breaker.observe('model_unavailable', item('h')), [item('f'), item('g'), item('h')]);
});

test('attempts count recorded failures, not dispatches; refund and --retry-failed give them back', (t) => {
  const store = RunStore.open(join(temporaryDirectory(t), 'attempts.sqlite'));
  t.after(() => store.close());
  const dispatch = () => {
    store.markDispatched('k', 0, 0, []);
    store.flush();
  };
  dispatch();
  dispatch();
  assert.deepEqual(
    store.lookup('k', 0),
    { status: 'pending', attempts: 0, retryable: null },
    'dispatched twice (two killed runs): no attempt used',
  );
  const fail = (retryable: boolean) => {
    store.saveResult({
      key: 'k',
      sample: 0,
      status: 'failed',
      record: null,
      errorClass: 'infra',
      errorCode: 'x',
      errorMessage: 'x',
      retryable,
    });
    store.flush();
  };
  fail(true);
  assert.deepEqual(store.lookup('k', 0), { status: 'failed', attempts: 1, retryable: 1 });
  dispatch();
  store.release('k', 0);
  store.flush();
  assert.deepEqual(
    store.lookup('k', 0),
    { status: 'pending', attempts: 1, retryable: 1 },
    'an interrupted retry uses nothing',
  );
  fail(false);
  assert.deepEqual(store.lookup('k', 0), { status: 'failed', attempts: 2, retryable: 0 });
  store.refund('k', 0);
  store.flush();
  assert.deepEqual(store.lookup('k', 0), { status: 'pending', attempts: 1, retryable: 0 });
  fail(false);
  assert.equal(store.resetFailedAttempts(), 1);
  assert.deepEqual(store.lookup('k', 0), { status: 'failed', attempts: 0, retryable: 1 });
});

test('the run lock: held by a live process it refuses naming pid and host; a dead holder, its own pid, are taken over', async (t) => {
  const path = join(temporaryDirectory(t), 'lock.sqlite');
  const store = RunStore.open(path);
  t.after(() => store.close());
  // Another connection plays the part of other processes writing the lock row.
  const lockDb = openDatabase(path);
  t.after(() => lockDb.close());
  store.acquireLock();
  store.acquireLock();
  assert.equal(store.lockHolder()?.pid, process.pid, 'taking it again in the same process is fine');
  const other = spawn('sleep', ['30']);
  t.after(() => other.kill('SIGKILL'));
  await new Promise((resolve) => other.once('spawn', resolve));
  const start = (await import('node:fs'))
    .readFileSync(`/proc/${other.pid}/stat`, 'utf8')
    .split(') ')[1]!
    .split(' ')[19];
  lockDb.prepare('UPDATE run_lock SET pid = ?, process_start = ?').run(other.pid, start);
  assert.throws(
    () => store.acquireLock(),
    (error: unknown) =>
      error instanceof RunError &&
      error.code === 'run_locked' &&
      error.message.includes(`process ${other.pid} on host ${hostname()}`),
  );
  lockDb.prepare('UPDATE run_lock SET process_start = ?').run('1');
  store.acquireLock();
  assert.equal(store.lockHolder()?.pid, process.pid, 'a pid now used by another process is not the holder');
  lockDb.prepare('UPDATE run_lock SET pid = ?, process_start = ?').run(other.pid, start);
  other.kill('SIGKILL');
  await new Promise((resolve) => other.once('exit', resolve));
  await new Promise((resolve) => setTimeout(resolve, 50));
  store.acquireLock();
  assert.equal(store.lockHolder()?.pid, process.pid, 'a dead holder is taken over');
  lockDb.prepare("UPDATE run_lock SET pid = 1, host = 'elsewhere'").run();
  assert.throws(
    () => store.acquireLock(),
    /in use by process 1 on host elsewhere/,
    'on another host liveness cannot be checked: refused',
  );
  lockDb.prepare('DELETE FROM run_lock').run();
  store.acquireLock();
  store.releaseLock();
  assert.equal(store.lockHolder(), undefined);
});

test('a JSONL line that is not valid UTF-8 is a bad row (never replaced); valid non-ASCII text is read exactly', async (t) => {
  const path = join(temporaryDirectory(t), 'utf8.jsonl');
  writeFileSync(
    path,
    Buffer.concat([
      Buffer.from('{"prompt": "café ☕ 日本"}\n'),
      Buffer.from([0x7b, 0x22, 0x70, 0x72, 0x6f, 0x6d, 0x70, 0x74, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d, 0x0a]),
      Buffer.from('{"prompt": "last"}\n'),
    ]),
  );
  const rows = [];
  for await (const row of readDataset(path, { skipBadRows: true })) rows.push(row);
  assert.equal(rows.length, 3);
  assert.deepEqual((rows[0] as { messages: unknown[] }).messages, [{ role: 'user', content: 'café ☕ 日本' }]);
  assert.deepEqual({ ...(rows[1] as object), reason: undefined }, { bad: true, index: 1, line: 2, reason: undefined });
  assert.match((rows[1] as { reason: string }).reason, /not valid UTF-8/);
  await assert.rejects(async () => {
    for await (const _row of readDataset(path)) void _row;
  }, /utf8\.jsonl:2: not valid UTF-8/);
});
