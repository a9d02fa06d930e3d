import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { projectRoot } from '../../src/util/paths.js';
import { reply, startScriptedServer } from '../../src/testing/index.js';
import { temporaryDirectory } from '../helpers/cli.js';
import { QWEN3_FOLDER, qwen3 } from '../helpers/qwen3.js';
import { startFakeAtropos, type FakeAtropos } from '../helpers/atropos-api.js';
import { startServe } from '../helpers/serve-trainer.js';

const DATASET = join(projectRoot(), 'examples', 'serve-math.jsonl');

async function until(what: string, done: () => boolean, stderr: () => string): Promise<void> {
  // Generous: a slow, busy machine; the check is what happened, never how fast.
  for (let waited = 0; !done(); waited += 50) {
    if (waited > 120_000) assert.fail(`timed out waiting for ${what}\n${stderr()}`);
    await sleep(50);
  }
}

async function get<T = unknown>(atropos: FakeAtropos, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${atropos.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await response.json()) as T;
}

test('traj serve --atropos registers as an Atropos environment and posts ScoredData that validates against its models', async (t) => {
  const directory = temporaryDirectory(t);
  const atropos = await startFakeAtropos();
  const tokenizer = await qwen3();
  const policy = await startScriptedServer((request) => reply(`as ${request.model}\n#### 7`), {
    tokenizer,
    record: false,
  });
  t.after(() => Promise.all([atropos.close(), policy.close()]));
  const server = await startServe(
    [
      '--env',
      'gsm8k',
      '--dataset',
      DATASET,
      '--run',
      'atropos',
      '--checkpoints',
      join(directory, 'checkpoints'),
      '--out',
      join(directory, 'out'),
      '--port',
      '0',
      '--samples',
      '2',
      '--max-ahead',
      '2',
      '--tokenizer',
      QWEN3_FOLDER,
      '--base-url',
      policy.url,
      '--model',
      'policy',
      '--policy-version',
      '3',
      '--api-key-env',
      'SERVE_TEST_KEY',
      '--atropos',
      atropos.url,
      '--atropos-name',
      'traj-math',
    ],
    { cwd: directory, env: { SERVE_TEST_KEY: 'test' } },
  );
  t.after(() => server.child.kill('SIGKILL'));

  // Before the trainer starts, Atropos answers "wait for trainer to start"; traj asks again.
  await until(
    'a first registration attempt',
    () => atropos.calls.some((call) => call.route === 'POST /register-env'),
    server.stderr,
  );
  assert.equal(atropos.envs.length, 0);
  await get(atropos, '/register', {
    wandb_group: 'g',
    wandb_project: 'p',
    batch_size: 2,
    max_token_len: 8192,
    checkpoint_dir: '',
    save_checkpoint_interval: 0,
    starting_step: 0,
    num_steps: 10,
  });
  await get(atropos, '/batch');
  await until('registration', () => atropos.envs.length === 1, server.stderr);
  assert.deepEqual(atropos.envs[0], {
    max_token_length: 8192,
    desired_name: 'traj-math',
    weight: 1,
    group_size: 2,
    min_batch_allocation: null,
  });

  // --max-ahead 2: traj posts while Atropos' queue holds fewer than 2 of its groups, then waits.
  await until('two groups posted', () => atropos.scored.length === 2, server.stderr);
  await sleep(1500);
  assert.equal(atropos.scored.length, 2, 'paused while the queue is full');
  const batch = await get<{ batch: unknown[] | null }>(atropos, '/batch');
  assert.equal(batch.batch?.length, 1, 'the trainer took one group (batch_size 2 = one group of 2)');
  await until('a third group after the trainer took one', () => atropos.scored.length === 3, server.stderr);

  assert.deepEqual(atropos.invalid, [], 'every body validated against its Atropos model');
  for (const data of atropos.scored) {
    assert.equal(data.env_id, 0);
    assert.equal(data.tokens.length, 2);
    // Every answer says 7: right for the apples item only (the environment's exact-match reward).
    assert.equal(data.scores.length, 2);
    assert.ok(data.scores.every((score) => score === 0 || score === 1));
    data.tokens.forEach((ids, index) => {
      assert.equal(data.masks[index]!.length, ids.length);
      const sampled = data.masks[index]!.filter((mask) => mask !== -100);
      assert.ok(sampled.length > 0 && sampled.every((id, position) => typeof id === 'number' && position >= 0));
      assert.match(tokenizer.decode(sampled), /as policy\n#### 7/);
    });
    assert.equal(data.messages!.length, 2);
    assert.equal(data.generation_params!.policy_version, 3);
  }
  const groups = atropos.scored.map((data) => data.generation_params!.traj_group);
  assert.equal(new Set(groups).size, groups.length, 'no group posted twice');

  server.child.kill('SIGTERM');
  await server.done;
  assert.ok(
    atropos.calls.some(
      (call) => call.route === 'POST /disconnect-env' && (call.body as { env_id: number }).env_id === 0,
    ),
    'traj disconnects when it stops',
  );
});

test('--atropos without --tokenizer is a usage error: ScoredData needs tokens and masks', async (t) => {
  const directory = temporaryDirectory(t);
  await assert.rejects(
    startServe(
      ['--env', 'gsm8k', '--dataset', DATASET, '--run', 'x', '--atropos', 'http://127.0.0.1:9', '--scripted-if-unset'],
      {
        cwd: directory,
      },
    ),
    /--atropos needs --tokenizer/,
  );
});
