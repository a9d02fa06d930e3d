import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, SandboxError } from '../../src/errors.js';
import { createLocalSandbox, localIsolationWarning } from '../../src/sandbox/index.js';
import { startScriptedServer, echoScript } from '../../src/testing/index.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

const MISSING = '/nonexistent/traj-test/bwrap';

describe('local sandbox without bubblewrap', () => {
  let saved: string | undefined;
  before(() => {
    saved = process.env.TRAJ_BWRAP;
    process.env.TRAJ_BWRAP = MISSING;
  });
  after(() => {
    if (saved === undefined) delete process.env.TRAJ_BWRAP;
    else process.env.TRAJ_BWRAP = saved;
  });

  it('isolation auto falls back to plain processes, and the warning names what is not isolated', async () => {
    const sandbox = await createLocalSandbox({ kind: 'local' });
    try {
      // Plain processes: the host's processes are visible (the PID namespace would hide them).
      const result = await sandbox.exec(`test -d /proc/${process.pid} && echo host-visible`);
      assert.equal(result.stdout, 'host-visible\n');
    } finally {
      await sandbox.dispose();
    }
    const warning = await localIsolationWarning(undefined);
    assert.ok(warning);
    assert.match(warning, /NOT isolated/);
    assert.match(warning, new RegExp(MISSING.replaceAll('/', '\\/')));
    for (const what of [/your files/, /environ/, /network/, /setsid/, /fork without limit/])
      assert.match(warning, what);
    assert.equal(
      await localIsolationWarning({ isolation: 'none' }),
      undefined,
      'isolation none is a choice, not a fallback',
    );
  });

  it('isolation bwrap fails clearly when bubblewrap cannot be had', async () => {
    await assert.rejects(createLocalSandbox({ kind: 'local', local: { isolation: 'bwrap' } }), (error: unknown) => {
      assert.ok(error instanceof SandboxError);
      assert.equal(error.code, 'isolation_unavailable');
      assert.match(error.message, /isolation 'bwrap' is not available/);
      assert.match(error.message, /not found \(install the bubblewrap package\)/);
      return true;
    });
  });

  it('a batch says so once, loudly, on stderr, and still runs', async (t) => {
    const directory = temporaryDirectory(t);
    const server = await startScriptedServer(echoScript);
    t.after(() => server.close());
    const dataset = join(directory, 'prompts.jsonl');
    writeFileSync(
      dataset,
      `${Array.from({ length: 6 }, (_, index) => JSON.stringify({ prompt: `p${index}` })).join('\n')}\n`,
    );
    const result = await runCli(
      [
        'batch',
        '--dataset',
        dataset,
        '--run',
        'fallback',
        '--base-url',
        server.url,
        '--model',
        'm',
        '--api-key-env',
        'NO_KEY',
        '--toolsets',
        'terminal',
        '--workers',
        '2',
      ],
      {
        cwd: directory,
        env: { TRAJ_BWRAP: MISSING },
      },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr.split('WARNING: local sandboxes are NOT isolated').length - 1, 1, result.stderr);
  });

  it('a batch with isolation bwrap stops before any rollout, naming the problem', async (t) => {
    const directory = temporaryDirectory(t);
    const dataset = join(directory, 'prompts.jsonl');
    writeFileSync(dataset, '{"prompt": "p"}\n');
    writeFileSync(join(directory, 'run.yaml'), 'local:\n  isolation: bwrap\n');
    const result = await runCli(
      [
        'batch',
        '--config',
        'run.yaml',
        '--dataset',
        dataset,
        '--run',
        'strict',
        '--scripted-if-unset',
        '--toolsets',
        'terminal',
      ],
      {
        cwd: directory,
        env: { TRAJ_BWRAP: MISSING },
      },
    );
    assert.equal(result.code, 4, `a run-level fault (exit 4), not failed prompts: ${result.stderr}`);
    assert.match(result.stderr, /isolation 'bwrap' is not available: .*not found/);
  });

  it('traj ask says so too, and its --config local: {isolation: bwrap} stops it before any model call', async (t) => {
    const directory = temporaryDirectory(t);
    const server = await startScriptedServer(echoScript);
    t.after(() => server.close());
    const ask = (extra: string[]) =>
      runCli(
        ['ask', 'hello', '--toolsets', 'terminal', '--scratch', '--base-url', server.url, '--model', 'm', ...extra],
        { cwd: directory, env: { TRAJ_BWRAP: MISSING, NO_KEY: 'x' } },
      );
    const fallback = await ask(['--api-key-env', 'NO_KEY']);
    assert.equal(fallback.code, 0, fallback.stderr);
    assert.equal(fallback.stderr.split('WARNING: local sandboxes are NOT isolated').length - 1, 1, fallback.stderr);
    assert.match(fallback.stdout, /\[tool result: terminal\] \{"exit_code":0,"output":"hello\\n"\}/);

    writeFileSync(join(directory, 'strict.yaml'), 'local:\n  isolation: bwrap\n');
    const before = server.requestCount();
    const strict = await ask(['--api-key-env', 'NO_KEY', '--config', 'strict.yaml']);
    assert.equal(strict.code, 4, strict.stderr);
    assert.match(strict.stderr, /isolation 'bwrap' is not available: .*not found/);
    assert.equal(server.requestCount(), before, 'no model call was made');
    assert.doesNotMatch(strict.stdout, /\[tool result/);
  });
});

describe('local sandbox config', () => {
  it('an unknown key under local: is an error naming the file and the key', async (t) => {
    const directory = temporaryDirectory(t);
    writeFileSync(join(directory, 'run.yaml'), 'local:\n  isolaton: bwrap\n');
    const result = await runCli(
      ['batch', '--config', 'run.yaml', '--dataset', 'x.jsonl', '--run', 'typo', '--scripted-if-unset'],
      { cwd: directory },
    );
    assert.notEqual(result.code, 0, result.stderr);
    assert.match(result.stderr, /run\.yaml: local/);
    assert.match(result.stderr, /isolaton/);
  });

  it('network must be a boolean', async () => {
    await assert.rejects(createLocalSandbox({ kind: 'local', local: { network: 'none' } }), ConfigError);
  });
});
