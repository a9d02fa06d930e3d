import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { loadAgentDefinition, type AgentDefinition } from '../../src/bridge/index.js';
import { toWireMessages } from '../../src/model/wire.js';
import { executeRollout, type RolloutOutcome } from '../../src/run/rollout.js';
import { createThreadServices } from '../../src/run/worker-services.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/index.js';
import { buildRoot } from '../../src/util/paths.js';
import { folderRemovedAtExit } from '../helpers/cli.js';
import { dockerUnavailableReason } from '../helpers/docker.js';
import { scriptedRolloutSettings } from '../helpers/rollout-settings.js';
import { shellSolver, SOLVED } from '../helpers/shell-solver.js';

/**
 * The real agent CLIs, installed from npm into the sandbox image, solving a file task against the
 * scripted endpoint through the rollout's recording proxy. The first run of each builds its image
 * (minutes); later runs reuse it by content hash.
 */
const SECRET = `sk-bridge-${randomBytes(12).toString('hex')}`;
const services = createThreadServices();
let server: ScriptedServer;
let unavailable: string | undefined;

before(async () => {
  unavailable = await dockerUnavailableReason();
  process.env.BRIDGE_SECRET = SECRET;
  process.env.TRAJ_BRIDGE_TEST_KEY = SECRET;
  server = await startScriptedServer(shellSolver(COMMAND));
});
after(async () => {
  await server?.close();
  await services.close();
});

/** Solves the task and, while the agent's processes live, dumps their environments for the reward's key search. */
const COMMAND = 'echo 100 > report.txt; cat /proc/[0-9]*/environ 2>/dev/null | tr "\\0" "\\n" > /tmp/env-dump.txt';

function rollout(definition: AgentDefinition, key: string): Promise<RolloutOutcome> {
  const settings = scriptedRolloutSettings(server.url, `bridge-${key}`, {
    sandbox: { kind: 'docker' },
    agent: 'cli',
    agentCli: definition,
    maxTurns: 8,
    artifactsDir: folderRemovedAtExit('traj-bridge-artifacts-'),
    environmentModule: join(buildRoot(), 'tests', 'bridge', 'report-environment.js'),
  });
  settings.endpoint.api_key_env = 'TRAJ_BRIDGE_TEST_KEY';
  return executeRollout(
    {
      key,
      sample: 0,
      toolsets: [],
      messages: [
        { role: 'user', content: 'Create a file report.txt in the current directory whose first line is 100.' },
      ],
      item: { id: key, instruction: '' },
      settings,
    },
    services,
    new AbortController().signal,
  );
}

async function skipWithoutDocker(t: TestContext): Promise<boolean> {
  if (unavailable) t.skip(unavailable);
  return unavailable !== undefined;
}

/** The record's conversation is the last request the endpoint received plus the answer it sent. */
function assertRecordIsTheWire(outcome: RolloutOutcome) {
  const messages = outcome.result.messages;
  const lastRequest = server.requests.filter((request) => request.tools?.length).at(-1)!;
  assert.deepEqual(toWireMessages(messages.slice(0, -1)), lastRequest.messages);
  assert.deepEqual(messages.at(-1), { role: 'assistant', content: SOLVED });
  const call = messages.find((message) => message.role === 'assistant' && message.tool_calls)!;
  assert.equal(call.role === 'assistant' && call.tool_calls![0]!.function.arguments.includes('report.txt'), true);
  assert.deepEqual(
    outcome.tools.map((tool) => tool.function.name),
    lastRequest.tools!.map((tool) => tool.function.name),
  );
}

describe('third-party agents in Docker through the recording proxy', () => {
  for (const name of ['qwen-code', 'codex', 'claude-code']) {
    it(`${name} solves the file task; the record is what the endpoint saw; no key in the container`, async (t) => {
      if (await skipWithoutDocker(t)) return;
      server.requests.length = 0;
      const outcome = await rollout(loadAgentDefinition(name), `${name}-solve`);
      assert.equal(outcome.error, undefined, JSON.stringify(outcome.error));
      assert.equal(outcome.reward?.reward, 1, JSON.stringify(outcome.reward));
      assert.equal(outcome.result.finishReason, 'stop');
      assertRecordIsTheWire(outcome);
      const details = outcome.reward!.reward_details as { keyFoundIn: string; environLines: number };
      assert.equal(details.keyFoundIn, '');
      assert.ok(details.environLines > 5, 'the environments of the agent processes were searched');
      assert.ok(outcome.artifacts?.some((path) => path.endsWith(`${name}-stdout.txt`)));
    });
  }

  it('a turn limit stops the agent at the proxy: the rollout ends max_turns with what the agent did so far', async (t) => {
    if (await skipWithoutDocker(t)) return;
    server.requests.length = 0;
    const definition = loadAgentDefinition('codex');
    const outcome = await rollout({ ...definition, limits: { turns: 1 } }, 'codex-limit');
    assert.equal(outcome.error, undefined, JSON.stringify(outcome.error));
    assert.equal(outcome.result.finishReason, 'max_turns');
    assert.equal(outcome.result.turns, 1);
    assert.match(outcome.result.error?.message ?? '', /turn limit \(1 model calls\)/);
    // The one call the endpoint answered is the record's last turn: the tool call, never run to a second turn.
    assert.equal(server.requests.filter((request) => request.tools?.length).length, 1);
    const last = outcome.result.messages.at(-1);
    assert.equal(last?.role === 'assistant' && last.tool_calls?.length, 1);
  });
});
