import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exitCodeFor, exitCodeHelp, EXIT_CODE_TABLE } from '../../src/cli/exit-codes.js';
import { ConfigError, DatasetError, ModelError, RunError, SandboxError } from '../../src/errors.js';
import { runCli } from '../helpers/cli.js';

test('exitCodeFor: one table for every command', () => {
  assert.equal(exitCodeFor(new ConfigError('bad flag', { code: 'cli_usage' })), 2);
  assert.equal(exitCodeFor(new ConfigError('unknown key', { code: 'config_invalid' })), 2);
  assert.equal(exitCodeFor(new DatasetError('no file', { code: 'dataset_missing' })), 2);
  assert.equal(exitCodeFor(new DatasetError('bad row', { code: 'dataset_row_invalid' })), 2);
  assert.equal(exitCodeFor(new RunError('settings changed', { code: 'fingerprint_changed' })), 2);
  for (const error of [
    new ModelError('401', { code: 'model_auth' }),
    new ConfigError('no key', { code: 'api_key_missing' }),
    new ModelError('404', { code: 'model_not_found' }),
    new ModelError('down', { code: 'model_unreachable' }),
    new SandboxError('no image', { code: 'image_missing' }),
    new SandboxError('no engine', { code: 'engine_unreachable' }),
    new RunError('held', { code: 'run_locked' }),
    new RunError('every worker refuses the queued run', { code: 'queue_refused' }),
  ]) {
    assert.equal(exitCodeFor(error), 4, error.code);
  }
  assert.equal(exitCodeFor(new RunError('over budget', { code: 'budget_exceeded' })), 5);
  assert.equal(exitCodeFor(new RunError('nothing to export', { code: 'nothing_to_export' })), 1);
  assert.equal(exitCodeFor(new Error('a bug')), 1);
  assert.equal(exitCodeFor(Object.assign(new Error('no file'), { code: 'ENOENT' })), 1);
  assert.equal(
    exitCodeFor({ name: 'ModelError', code: 'model_auth', retryable: false, message: '401' }),
    4,
    'an error serialized from a worker thread',
  );
  assert.equal(exitCodeFor({ name: 'ModelError', code: 'model_unavailable', retryable: true, message: '503' }), 1);
  assert.deepEqual(
    EXIT_CODE_TABLE.map(([code]) => code),
    [0, 1, 2, 3, 4, 5, 130],
  );
});

test("traj --help and each run command's --help show the exit-code table", async () => {
  const help = await runCli(['--help']);
  assert.equal(help.code, 0);
  assert.ok(help.stdout.includes(exitCodeHelp()), help.stdout);
  for (const command of ['batch', 'eval', 'bench']) {
    const result = await runCli([command, '--help']);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(result.stdout.includes(exitCodeHelp()), `${command} --help:\n${result.stdout}`);
  }
  const batch = await runCli(['batch', '--help']);
  assert.match(batch.stdout, /--retry-failed/);
});

test('a usage error exits 2 from any command', async () => {
  for (const args of [['batch', '--run', 'x'], ['eval', '--run', 'x'], ['bench'], ['export'], ['nosuchcommand']]) {
    const result = await runCli(args);
    assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
  }
});
