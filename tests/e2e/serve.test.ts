import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { projectRoot } from '../../src/util/paths.js';
import { startViewer } from '../../src/view/index.js';
import type { ScoredGroup } from '../../src/serve/index.js';
import { reply, startScriptedServer, type ScriptedServer } from '../../src/testing/index.js';
import { temporaryDirectory } from '../helpers/cli.js';
import { QWEN3_FOLDER, qwen3 } from '../helpers/qwen3.js';
import { postJson, startServe, type ServeProcess } from '../helpers/serve-trainer.js';

const DATASET = join(projectRoot(), 'examples', 'serve-math.jsonl');
const MAX_STALENESS = 0;
const WANTED = 50;

interface Policy {
  base_url: string;
  model: string;
  version: number;
}

/**
 * A policy endpoint that says which server and model answered, and is right about every second
 * answer (rewards differ inside a group, so advantages are not all zero).
 */
async function policyServer(name: string): Promise<ScriptedServer> {
  const tokenizer = await qwen3();
  let answers = 0;
  return startScriptedServer(
    (request) => reply(`answered by ${name} as ${request.model}\n#### ${answers++ % 2 === 0 ? 7 : 30}`),
    { tokenizer, record: false },
  );
}

function serveArgs(directory: string, policy: Policy): string[] {
  return [
    '--env',
    'gsm8k',
    '--dataset',
    DATASET,
    '--run',
    'online',
    '--checkpoints',
    join(directory, 'checkpoints'),
    '--out',
    join(directory, 'out'),
    '--port',
    '0',
    '--samples',
    '2',
    '--max-ahead',
    '3',
    '--max-staleness',
    String(MAX_STALENESS),
    '--config',
    join(directory, 'run.yaml'),
    '--tokenizer',
    QWEN3_FOLDER,
    '--base-url',
    policy.base_url,
    '--model',
    policy.model,
    '--policy-version',
    String(policy.version),
    '--api-key-env',
    'SERVE_TEST_KEY',
    '--concurrency',
    '4',
  ];
}

interface Received {
  request: string;
  version: number;
  group: ScoredGroup;
}

test('a trainer pulls 50 groups while the policy changes twice and the server is killed and restarted', async (t) => {
  const directory = temporaryDirectory(t);
  writeFileSync(join(directory, 'run.yaml'), 'endpoint:\n  logprobs: true\n  token_ids: vllm\n');
  const first = await policyServer('first');
  const second = await policyServer('second');
  t.after(() => Promise.all([first.close(), second.close()]));
  const policies: Policy[] = [
    { base_url: first.url, model: 'policy-v0', version: 0 },
    { base_url: first.url, model: 'policy-v1', version: 1 },
    { base_url: second.url, model: 'policy-v2', version: 2 },
  ];
  const env = { SERVE_TEST_KEY: 'test' };
  let server: ServeProcess = await startServe(serveArgs(directory, policies[0]!), { cwd: directory, env });
  t.after(() => server.child.kill('SIGKILL'));
  const received: Received[] = [];
  let killed = 0;
  for (let step = 0; received.length < WANTED; step++) {
    const policy = policies[Math.min(2, Math.floor(received.length / 17))]!;
    const request = { request_id: `step-${step}`, count: Math.min(5, WANTED - received.length), policy };
    const pending = postJson<{ groups: ScoredGroup[] }>(`${server.url}/v1/groups`, request);
    if (step === 4 || step === 7) {
      // Killed with the pull in flight (waiting, or answered): the retried request id loses and repeats nothing.
      await new Promise((resolve) => setTimeout(resolve, step === 4 ? 50 : 400));
      server.child.kill('SIGKILL');
      await pending.catch(() => undefined);
      await server.done.catch(() => undefined);
      killed++;
      server = await startServe(serveArgs(directory, policies[0]!), { cwd: directory, env });
    }
    const answer = await (killed > 0 && (step === 4 || step === 7)
      ? postJson<{ groups: ScoredGroup[] }>(`${server.url}/v1/groups`, request)
      : pending);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.groups.length, request.count, `step ${step} got every group it asked for`);
    for (const group of answer.body.groups)
      received.push({ request: request.request_id, version: policy.version, group });
  }
  assert.equal(killed, 2);

  const keys = received.map((entry) => entry.group.group);
  assert.equal(new Set(keys).size, WANTED, 'no group was delivered twice');
  const seen = new Set<number>();
  let mixed = 0;
  for (const { version, group } of received) {
    // The version a group carries is the one that produced it: every answer names that policy's model.
    for (const messages of group.messages) {
      const answer = messages.findLast((message) => message.role === 'assistant')!;
      assert.match(String(answer.content), new RegExp(`as policy-v${group.policy_version}\\b`));
      if (group.policy_version === 2) assert.match(String(answer.content), /answered by second/);
    }
    assert.ok(version - group.policy_version <= MAX_STALENESS, `group ${group.group} is within the staleness bound`);
    assert.equal(group.scores.length, 2);
    assert.equal(group.tokens!.length, 2);
    assert.equal(group.masks!.length, 2);
    assert.ok(group.logprobs, 'logprobs from the endpoint ride along');
    group.tokens!.forEach((ids, index) => {
      assert.equal(group.masks![index]!.length, ids.length);
      assert.equal(group.logprobs![index]!.length, ids.length);
      assert.ok(
        group.masks![index]!.some((mask: number) => mask !== -100),
        'the policy sampled some tokens',
      );
    });
    const mean = (group.scores[0] + group.scores[1]) / 2;
    group.scores.forEach((score: number, index: number) => {
      assert.ok(score === 0 || score === 1, "rewards are the environment's exact-match rewards");
      // Group-relative: above the group's mean is positive, below negative, a tie is zero.
      assert.equal(Math.sign(group.advantages[index]), Math.sign(score - mean));
    });
    if (group.scores[0] !== group.scores[1]) mixed++;
    seen.add(group.policy_version);
  }
  assert.deepEqual([...seen].sort(), [0, 1, 2], 'groups of all three versions were served');
  assert.ok(mixed > 0, 'some groups have a right and a wrong answer');

  server.child.kill('SIGTERM');
  await server.done;
  const db = new Database(join(directory, 'checkpoints', 'online.sqlite'), { readonly: true });
  t.after(() => db.close());
  const delivered = db
    .prepare(`SELECT group_key, request_id, policy_version FROM served_groups WHERE status = 'delivered' ORDER BY seq`)
    .all() as { group_key: string; request_id: string; policy_version: number }[];
  assert.deepEqual(
    delivered.map((row) => row.group_key).sort(),
    [...keys].sort(),
    'the store delivered exactly the groups the trainer received',
  );
  const stale = db.prepare(`SELECT COUNT(*) FROM served_groups WHERE status = 'stale'`).pluck().get() as number;
  assert.ok(stale > 0, 'groups produced ahead under an old version were dropped and counted');
  const rows = db
    .prepare(
      `SELECT key, COUNT(*) AS n, SUM(status = 'done') AS done FROM items WHERE key IN (SELECT value FROM json_each(?)) GROUP BY key`,
    )
    .all(JSON.stringify(keys)) as { key: string; n: number; done: number }[];
  assert.equal(rows.length, WANTED);
  for (const row of rows) assert.deepEqual([row.n, row.done], [2, 2], `${row.key}: two rollouts, each stored once`);

  // traj view shows the serving run: groups, rate, reward by policy version, staleness.
  const viewer = await startViewer({
    stores: [],
    checkpointsDir: join(directory, 'checkpoints'),
    sessionsPath: join(directory, 'sessions.sqlite'),
    host: '127.0.0.1',
    port: 0,
  });
  t.after(() => viewer.close());
  const page = await (await fetch(new URL('/runs/online', viewer.url))).text();
  const section = /<section data-serving>.*?<\/section>/s.exec(page)?.[0];
  assert.ok(section, 'the run page has a serving section');
  const perVersion = db
    .prepare(
      `SELECT policy_version AS version, COUNT(*) AS n, SUM(status = 'stale') AS stale FROM served_groups GROUP BY 1`,
    )
    .all() as { version: number; n: number; stale: number }[];
  for (const { version, n, stale } of perVersion) {
    const row = new RegExp(
      `<tr data-version="${version}"><td>${version}</td><td>${n}</td><td>[^<]*</td><td>${stale}</td></tr>`,
    );
    assert.match(section, row);
  }
  assert.match(section, /data-fact="groups">[^<]*delivered 50/);
  assert.match(section, /data-fact="staleness">0 behind: 50</);
  assert.match(section, /data-fact="policy version">2</);
});
