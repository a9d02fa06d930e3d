import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { executeRollout, type RolloutServices } from '../../src/run/rollout.js';
import { createThreadServices } from '../../src/run/worker-services.js';
import { callTool, reply, startScriptedServer, type ChatRequest } from '../../src/testing/index.js';
import { bwrapSuiteOptions } from '../helpers/bwrap.js';
import { scriptedRolloutSettings } from '../helpers/rollout-settings.js';

/**
 * "A rollout that never calls a tool pays for no sandbox": no folder, no namespace, no shell,
 * whatever toolsets it is offered; the first command makes them.
 */
const bwrap = await bwrapSuiteOptions();

function countingServices(): { services: RolloutServices & { close(): Promise<void> }; created: () => number } {
  const base = createThreadServices({ deferTeardowns: false });
  let created = 0;
  return {
    services: {
      ...base,
      createSandbox: async (options) => {
        created++;
        return base.createSandbox(options);
      },
    },
    created: () => created,
  };
}

/** bubblewrap processes alive on the machine now. */
/** bubblewrap processes this test process started (other tests and jobs on the machine run their own). */
function bwrapProcesses(): number {
  let pids: string[];
  try {
    pids = execFileSync('pgrep', ['-x', 'bwrap'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    return 0; // pgrep exits 1 when nothing matches
  }
  return pids.filter((pid) => descendsFromUs(Number(pid))).length;
}

function descendsFromUs(pid: number): boolean {
  for (let current = pid, steps = 0; current > 1 && steps < 64; steps++) {
    if (current === process.pid) return true;
    try {
      // Field 4 of /proc/PID/stat, counted after the "(comm)" that may itself hold spaces.
      current = Number(readFileSync(`/proc/${current}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
    } catch {
      return false; // it ended meanwhile
    }
  }
  return false;
}

async function rollout(toolsets: string[], script: (request: ChatRequest) => ReturnType<typeof reply>) {
  const server = await startScriptedServer(script);
  const { services, created } = countingServices();
  let bwrapDuringRollout = 0;
  const watcher = setInterval(() => {
    bwrapDuringRollout = Math.max(bwrapDuringRollout, bwrapProcesses());
  }, 20);
  try {
    const outcome = await executeRollout(
      {
        key: 'k',
        sample: 0,
        toolsets,
        messages: [{ role: 'user', content: 'go' }],
        settings: scriptedRolloutSettings(server.url, 'lazy-sandbox-test', {
          sandbox: { kind: 'local', local: { isolation: 'bwrap' } },
        }),
      },
      services,
      new AbortController().signal,
    );
    return { outcome, created: created(), bwrapDuringRollout };
  } finally {
    clearInterval(watcher);
    await services.close();
    await server.close();
  }
}

test(
  'a rollout offered terminal, file and code that calls no tool makes no sandbox, namespace or shell',
  bwrap,
  async () => {
    const before = bwrapProcesses();
    const { outcome, created, bwrapDuringRollout } = await rollout(['terminal', 'file', 'code_execution'], () =>
      reply('no tools needed'),
    );
    assert.equal(outcome.error, undefined);
    assert.equal(outcome.result.finishReason, 'stop');
    assert.equal(created, 0, 'no sandbox was created');
    assert.equal(bwrapDuringRollout, before, 'no bubblewrap namespace was started');
  },
);

test('the first command makes the sandbox and its namespace', bwrap, async () => {
  const { created, bwrapDuringRollout } = await rollout(['terminal'], (request) =>
    request.messages.some((message) => message.role === 'tool')
      ? reply('ran')
      : callTool('terminal', { command: 'sleep 0.3; echo hi' }),
  );
  assert.equal(created, 1);
  assert.ok(bwrapDuringRollout > 0, 'the namespace ran the command');
});
