import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { createLocalSandbox, createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { callTool, reply, type ScriptFunction } from '../../src/testing/index.js';
import { loadToolRegistry } from '../../src/tools/index.js';
import { requireDockerOrSkip, uniqueRunName } from '../helpers/docker.js';
import { scriptedTerminalRun } from './scripted-terminal-run.js';

/** A model whose terminal calls lean on the shell keeping state, and one that times out. */
const STEPS = [
  { command: 'mkdir -p proj && cd proj && export TOKEN=abc && greet() { echo "hi $1"; }' },
  { command: 'pwd; echo "[${TOKEN-}]"; greet you; printf no-newline' },
  { command: 'printf before; sleep 30', timeout: 1 },
  { command: 'pwd; echo "[${TOKEN-}]"; cat; head -c 64 /dev/urandom | wc -c' },
];

const script: ScriptFunction = (request) => {
  const turn = request.messages.filter((message) => message.role === 'assistant').length;
  return turn < STEPS.length ? callTool('terminal', STEPS[turn]!) : reply('done');
};

interface Result {
  exit_code: number;
  output: string;
  timed_out?: boolean;
  shell?: string;
}

async function runScripted(t: TestContext, sandbox: Sandbox, persistent: boolean): Promise<Result[]> {
  return scriptedTerminalRun<Result>(
    t,
    sandbox,
    script,
    'work in proj',
    await loadToolRegistry({ terminal: { persistent } }),
  );
}

async function persistentScenario(t: TestContext, sandbox: Sandbox): Promise<void> {
  const workdir = sandbox.workdir;
  const results = await runScripted(t, sandbox, true);
  assert.deepEqual(results[0], { exit_code: 0, output: '' });
  assert.deepEqual(results[1], { exit_code: 0, output: `${workdir}/proj\n[abc]\nhi you\nno-newline` });
  assert.equal(results[2]!.timed_out, true);
  assert.equal(results[2]!.shell, 'restarted');
  assert.match(
    results[2]!.output,
    /^before\n\[timed out after 1 s: .*the shell was killed with it; the next call starts a new shell in the same folder/,
  );
  // The new shell is in proj with TOKEN; greet() is gone, cat reads an empty stdin.
  assert.deepEqual(results[3], { exit_code: 0, output: `${workdir}/proj\n[abc]\n64\n` });
}

async function freshScenario(t: TestContext, sandbox: Sandbox): Promise<void> {
  const workdir = sandbox.workdir;
  const results = await runScripted(t, sandbox, false);
  // Each result says the shell is fresh, so a model does not expect cd or variables to carry over.
  const note = '[this run starts a fresh shell per call: cd and variables do not carry over]';
  const escaped = note.replace(/[[\]]/g, '\\$&');
  assert.deepEqual(results[0], { exit_code: 0, output: note });
  assert.equal(results[1]!.exit_code, 0);
  assert.match(
    results[1]!.output,
    new RegExp(`^${workdir}\\n\\[\\]\\nno-newline\\n.*greet: command not found\\n${escaped}$`),
  );
  assert.equal(results[2]!.timed_out, true);
  assert.equal(results[2]!.shell, undefined);
  assert.deepEqual(results[3], { exit_code: 0, output: `${workdir}\n[]\n64\n${note}` });
}

describe('terminal through the agent loop: the persistent shell and terminal.persistent: false', () => {
  for (const isolation of ['bwrap', 'none'] as const) {
    test(`state carries across calls and survives a timeout (local, isolation ${isolation})`, async (t) => {
      await persistentScenario(t, await createLocalSandbox({ kind: 'local', local: { isolation } }));
    });
    test(`persistent: false carries nothing (local, isolation ${isolation})`, async (t) => {
      await freshScenario(t, await createLocalSandbox({ kind: 'local', local: { isolation } }));
    });
  }

  test('state carries across calls and survives a timeout (docker)', async (t) => {
    if (!(await requireDockerOrSkip(t))) return;
    await persistentScenario(t, await createSandbox({ kind: 'docker', run: uniqueRunName('shell'), key: 'agent' }));
  });

  test('persistent: false carries nothing (docker)', async (t) => {
    if (!(await requireDockerOrSkip(t))) return;
    await freshScenario(t, await createSandbox({ kind: 'docker', run: uniqueRunName('shell'), key: 'fresh' }));
  });
});
