import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { echoScript, startScriptedServer, type ScriptFunction } from '../../src/testing/index.js';
import { projectRoot } from '../../src/util/paths.js';
import { dockerRequired, dockerUnavailableReason } from '../helpers/docker.js';
import { runCli, startCli, temporaryDirectory } from '../helpers/cli.js';
import { prompts, readRecords, scriptedBatchArgs, writeJsonl } from '../helpers/batch-run.js';

/**
 * Run integrity under kills, run-level faults and bad rows (issue 13): nothing lost, nothing run
 * twice, no attempt used by a fault that is not the prompt's, and exit codes that say what happened.
 */

function batchArgs(dataset: string, run: string, baseUrl: string, extra: string[] = []): string[] {
  return scriptedBatchArgs(dataset, run, baseUrl, 'TRAJ_TEST_KEY', [
    '--workers',
    '2',
    '--concurrency',
    '8',
    '--toolsets',
    'file',
    ...extra,
  ]);
}

function storeRows(directory: string, run: string, sql: string): unknown[] {
  const db = new Database(join(directory, 'checkpoints', `${run}.sqlite`), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

function count(directory: string, run: string, where: string): number {
  const [row] = storeRows(directory, run, `SELECT COUNT(*) AS n FROM items WHERE ${where}`) as { n: number }[];
  return row!.n;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A real HTTP server answering every request with one status and an OpenAI-style error body. */
async function startErrorServer(
  status: number,
  message: string,
  port = 0,
): Promise<{ server: Server; port: number; url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    request.resume();
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: { message, type: 'invalid_request_error', code: 'invalid_api_key' } }));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actual = (server.address() as AddressInfo).port;
  return {
    server,
    port: actual,
    url: `http://127.0.0.1:${actual}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

test('SIGKILLed ten times at random moments, then run to the end: every prompt (duplicates included) lands exactly once, exit 0', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript, { latencyMs: 150, record: false });
  t.after(() => server.close());
  const dataset = join(directory, 'kills.jsonl');
  const rows = prompts(270);
  writeJsonl(dataset, [...rows, ...rows.slice(0, 30)]);
  // One attempt only: under the old rule a prompt in flight at a kill used it up and was skipped for good.
  const args = batchArgs(dataset, 'kills', server.url, ['--max-attempts', '1']);
  const doneAtKills: number[] = [];
  const landed = () => {
    try {
      return count(directory, 'kills', `status = 'done'`);
    } catch {
      return 0; // The store or its schema does not exist yet.
    }
  };
  for (let kill = 0; kill < 10; kill++) {
    const before = landed();
    const { child, done } = startCli(args, { cwd: directory });
    let exited = false;
    void done.then(() => (exited = true));
    // A random moment once this invocation is landing results (startup time varies with the machine's load).
    for (let tries = 0; tries < 2400 && !exited && landed() <= before; tries++) await sleep(25);
    await sleep(Math.floor(Math.random() * 700));
    child.kill('SIGKILL');
    const killed = await done;
    if (killed.signal !== 'SIGKILL')
      assert.equal(killed.code, 0, `run ${kill} ended on its own but not cleanly:\n${killed.stderr}`);
    doneAtKills.push(count(directory, 'kills', `status = 'done'`));
  }
  assert.ok(
    doneAtKills.filter((done) => done > 0 && done < 300).length >= 3,
    `kills should land mid-run; done counts at the kills: ${doneAtKills.join(', ')}`,
  );
  const final = await runCli(args, { cwd: directory });
  assert.equal(final.code, 0, final.stderr);
  assert.match(final.stdout, /wrote 300 trajectories/);
  const records = readRecords(directory, 'kills');
  assert.equal(records.length, 300);
  assert.equal(new Set(records.map((record) => record.id)).size, 300);
  assert.equal(
    records.filter((record) => /#[1-9]$/.test(record.id)).length,
    30,
    'the 30 duplicates are their own prompts (occurrence #1)',
  );
  assert.deepEqual(
    storeRows(directory, 'kills', 'SELECT status, COUNT(*) AS n, MAX(attempts) AS attempts FROM items GROUP BY status'),
    [{ status: 'done', n: 300, attempts: 0 }],
  );
  const stats = JSON.parse(readFileSync(join(directory, 'datasets', 'kills', 'statistics.json'), 'utf8'));
  assert.equal(stats.prompts.total, 300);
  assert.equal(stats.prompts.done, 300);
  assert.equal(stats.segments, 11, 'every invocation counts in the cumulative statistics');
});

test('an endpoint answering 401: the preflight stops the run (exit 4, the server message), no prompt used; pointed at a healthy endpoint, the rerun completes', async (t) => {
  const directory = temporaryDirectory(t);
  const dataset = join(directory, 'auth.jsonl');
  writeJsonl(dataset, prompts(20));
  const refusing = await startErrorServer(
    401,
    'Incorrect API key provided: sk-wrong. You can find your API key in your account settings.',
  );
  const result = await runCli(batchArgs(dataset, 'auth', refusing.url), {
    cwd: directory,
    env: { TRAJ_TEST_KEY: 'sk-wrong' },
  });
  await refusing.close();
  assert.equal(result.code, 4, result.stderr);
  assert.match(result.stderr, /refused the credentials: HTTP 401: Incorrect API key provided: sk-wrong/);
  assert.match(result.stderr, /TRAJ_TEST_KEY/);
  assert.equal(count(directory, 'auth', `attempts > 0 OR status = 'failed'`), 0);

  const healthy = await startScriptedServer(echoScript, { port: refusing.port });
  t.after(() => healthy.close());
  const rerun = await runCli(batchArgs(dataset, 'auth', healthy.url), {
    cwd: directory,
    env: { TRAJ_TEST_KEY: 'sk-right' },
  });
  assert.equal(rerun.code, 0, rerun.stderr);
  assert.equal(readRecords(directory, 'auth').length, 20);
});

test('traj eval and traj ask against a 401 endpoint exit 4 with the server message too', async (t) => {
  const directory = temporaryDirectory(t);
  const refusing = await startErrorServer(403, 'Project key revoked');
  t.after(() => refusing.close());
  const endpoint = ['--base-url', refusing.url, '--model', 'm', '--api-key-env', 'TRAJ_TEST_KEY'];
  const evaluated = await runCli(['eval', '--env', 'file-task', '--run', 'auth-eval', '--limit', '2', ...endpoint], {
    cwd: directory,
    env: { TRAJ_TEST_KEY: 'k' },
  });
  assert.equal(evaluated.code, 4, evaluated.stderr);
  assert.match(evaluated.stderr, /HTTP 403: Project key revoked/);
  const asked = await runCli(['ask', 'hello', ...endpoint], { cwd: directory, env: { TRAJ_TEST_KEY: 'k' } });
  assert.equal(asked.code, 4, asked.stderr);
  assert.match(asked.stderr, /HTTP 403: Project key revoked/);
});

test('a 401 on completions only (the model list answers): the circuit breaker stops at the first, in-flight rollouts go back to pending, exit 4', async (t) => {
  const directory = temporaryDirectory(t);
  const dataset = join(directory, 'breaker.jsonl');
  writeJsonl(dataset, prompts(60));
  const refusing: ScriptFunction = () => ({
    fault: 'http',
    status: 401,
    body: { error: { message: 'Invalid bearer token for this project' } },
  });
  const down = await startScriptedServer(refusing, { latencyMs: 100 });
  const result = await runCli(batchArgs(dataset, 'breaker', down.url, ['--concurrency', '4']), { cwd: directory });
  const requests = down.requestCount();
  await down.close();
  assert.equal(result.code, 4, result.stderr);
  assert.match(result.stderr, /run-level fault model_auth: .*HTTP 401: Invalid bearer token for this project/);
  assert.ok(requests <= 12, `stopped within a few failures, not all 60 prompts (${requests} requests)`);
  assert.equal(
    count(directory, 'breaker', `attempts > 0 OR status <> 'pending'`),
    0,
    'no prompt used an attempt or was recorded failed',
  );
  assert.ok(existsSync(join(directory, 'datasets', 'breaker', 'statistics.json')));

  const up = await startScriptedServer(echoScript, { port: down.port });
  t.after(() => up.close());
  const rerun = await runCli(batchArgs(dataset, 'breaker', up.url), { cwd: directory });
  assert.equal(rerun.code, 0, rerun.stderr);
  assert.equal(readRecords(directory, 'breaker').length, 60);
});

test('a dead port: the preflight says unreachable with the connection error (exit 4) in seconds; the rerun with the endpoint up completes', async (t) => {
  const directory = temporaryDirectory(t);
  const dataset = join(directory, 'dead.jsonl');
  writeJsonl(dataset, prompts(10));
  const probe = await startErrorServer(500, 'closing');
  await probe.close();
  const started = Date.now();
  const result = await runCli(batchArgs(dataset, 'dead', probe.url), { cwd: directory });
  assert.equal(result.code, 4, result.stderr);
  assert.match(result.stderr, /unreachable .*ECONNREFUSED/);
  assert.match(result.stderr, /preflight: GET .*\/models failed \(ECONNREFUSED/, 'the retries are not silent');
  assert.ok(Date.now() - started < 20_000);
  assert.equal(count(directory, 'dead', `attempts > 0 OR status = 'failed'`), 0);

  const up = await startScriptedServer(echoScript, { port: probe.port });
  t.after(() => up.close());
  const rerun = await runCli(batchArgs(dataset, 'dead', up.url), { cwd: directory });
  assert.equal(rerun.code, 0, rerun.stderr);
  assert.equal(readRecords(directory, 'dead').length, 10);
});

test('an endpoint that goes down mid-run (503 after retries): five in a row stop the run, their attempts given back; the rerun completes', async (t) => {
  const directory = temporaryDirectory(t);
  const dataset = join(directory, 'outage.jsonl');
  writeJsonl(dataset, prompts(40));
  const config = join(directory, 'no-retry.yaml');
  writeFileSync(config, 'endpoint:\n  max_retries: 0\n');
  const flaky: ScriptFunction = (_request, context) =>
    context.index < 8
      ? { content: 'fine' }
      : { fault: 'http', status: 503, body: { error: { message: 'upstream overloaded' } } };
  const down = await startScriptedServer(flaky, { latencyMs: 50 });
  const result = await runCli(batchArgs(dataset, 'outage', down.url, ['--concurrency', '2', '--config', config]), {
    cwd: directory,
  });
  await down.close();
  assert.equal(result.code, 4, result.stderr);
  assert.match(result.stderr, /run-level fault model_unavailable: .*HTTP 503: upstream overloaded/);
  assert.equal(count(directory, 'outage', `status = 'failed' OR attempts > 0`), 0, 'the streak used no attempts');
  assert.equal(count(directory, 'outage', `status = 'done'`), 8);

  const up = await startScriptedServer(echoScript, { port: down.port });
  t.after(() => up.close());
  const rerun = await runCli(batchArgs(dataset, 'outage', up.url, ['--config', config]), { cwd: directory });
  assert.equal(rerun.code, 0, rerun.stderr);
  assert.equal(readRecords(directory, 'outage').length, 40);
});

test('while a model call is retried, progress shows what the server said (never a silent wait)', async (t) => {
  const directory = temporaryDirectory(t);
  const dataset = join(directory, 'retry-notice.jsonl');
  writeJsonl(dataset, prompts(1));
  const busy: ScriptFunction = (_request, context) =>
    context.index < 2
      ? {
          fault: 'http',
          status: 503,
          headers: { 'retry-after-ms': '300' },
          body: { error: { message: 'engine warming up, try later' } },
        }
      : { content: 'fine' };
  const server = await startScriptedServer(busy);
  t.after(() => server.close());
  const result = await runCli(batchArgs(dataset, 'retry-notice', server.url), { cwd: directory });
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    result.stderr,
    /\[traj\] retrying a model call \(attempt 1 failed, next in 0\.3 s\): HTTP 503: engine warming up, try later/,
  );
  assert.equal(readRecords(directory, 'retry-notice').length, 1);
});

test('a missing key for a remote endpoint is refused before any rollout (exit 4)', async (t) => {
  const directory = temporaryDirectory(t);
  const dataset = join(directory, 'key.jsonl');
  writeJsonl(dataset, prompts(3));
  const result = await runCli(batchArgs(dataset, 'key', 'https://api.example.invalid/v1'), { cwd: directory });
  assert.equal(result.code, 4, result.stderr);
  assert.match(result.stderr, /needs an API key but \$TRAJ_TEST_KEY is not set/);
  assert.equal(count(directory, 'key', '1 = 1'), 0);
});

test('a malformed row in the middle: in-flight rollouts land as done, outputs written, exit 2 naming file:line; --skip-bad-rows finishes the rest', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript, { latencyMs: 400 });
  t.after(() => server.close());
  const dataset = join(directory, 'middle.jsonl');
  const lines = prompts(30).map((row) => JSON.stringify(row));
  lines[15] = '{"prompt": "broken json"';
  writeFileSync(dataset, `${lines.join('\n')}\n`);
  const result = await runCli(batchArgs(dataset, 'middle', server.url, ['--concurrency', '4']), { cwd: directory });
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /middle\.jsonl:16: invalid JSON/);
  assert.match(result.stderr, /already running landed and the outputs are written/);
  assert.deepEqual(
    storeRows(directory, 'middle', 'SELECT status, COUNT(*) AS n FROM items GROUP BY status'),
    [{ status: 'done', n: 15 }],
    'the 15 rows before it ran and landed; none crashed',
  );
  assert.equal(readRecords(directory, 'middle').length, 15);
  const stats = JSON.parse(readFileSync(join(directory, 'datasets', 'middle', 'statistics.json'), 'utf8'));
  assert.equal(stats.prompts.done, 15);

  const skipped = await runCli(batchArgs(dataset, 'middle', server.url, ['--skip-bad-rows']), { cwd: directory });
  assert.equal(skipped.code, 0, skipped.stderr);
  const records = readRecords(directory, 'middle');
  assert.equal(records.length, 29);
  const after = records.find((record) =>
    record.messages.some((message) => message.content === 'task number 16: say hello'),
  )!;
  assert.equal(after.source.row, 17, 'source.row is the line number, as bad rows are reported');
  assert.match(skipped.stdout, /bad rows \(1\):\n {2}line 16: invalid JSON/);
});

test('an empty dataset and a dataset of bad rows only exit 2 with a clear message', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript);
  t.after(() => server.close());
  const empty = join(directory, 'empty.jsonl');
  writeFileSync(empty, '\n\n');
  const none = await runCli(batchArgs(empty, 'empty', server.url), { cwd: directory });
  assert.equal(none.code, 2, none.stderr);
  assert.match(none.stderr, /empty\.jsonl: the dataset has no rows/);
  const bad = join(directory, 'bad.jsonl');
  writeFileSync(
    bad,
    Buffer.concat([Buffer.from('{"prompt": \n'), Buffer.from([0x7b, 0x22, 0x70, 0xff, 0xfe, 0x22, 0x7d, 0x0a])]),
  );
  const allBad = await runCli(batchArgs(bad, 'bad', server.url, ['--skip-bad-rows']), { cwd: directory });
  assert.equal(allBad.code, 2, allBad.stderr);
  assert.match(allBad.stderr, /all 2 rows are malformed/);
  assert.match(allBad.stdout, /line 2: not valid UTF-8/);
});

test('a missing, zero-byte or .csv dataset exits 2 before a store or any output is made', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript);
  t.after(() => server.close());
  writeFileSync(join(directory, 'zero.jsonl'), '');
  writeFileSync(join(directory, 'table.csv'), 'prompt\nhello\n');
  for (const [name, message] of [
    ['absent.jsonl', /absent\.jsonl: dataset file not found/],
    ['zero.jsonl', /zero\.jsonl: the dataset file is empty/],
    ['table.csv', /table\.csv: unknown dataset format/],
  ] as const) {
    const run = name.replace(/\W/g, '-');
    const result = await runCli(batchArgs(join(directory, name), run, server.url), { cwd: directory });
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, message);
    assert.equal(existsSync(join(directory, 'checkpoints', `${run}.sqlite`)), false, `${name}: no store`);
    assert.equal(existsSync(join(directory, 'datasets', run)), false, `${name}: no outputs`);
  }
});

test('two processes on one run: the second refuses at once naming the pid and host holding it (exit 4)', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript, { latencyMs: 200 });
  t.after(() => server.close());
  const dataset = join(directory, 'shared.jsonl');
  writeJsonl(dataset, prompts(30));
  const args = batchArgs(dataset, 'shared', server.url, ['--concurrency', '2']);
  const first = startCli(args, { cwd: directory });
  const store = join(directory, 'checkpoints', 'shared.sqlite');
  for (let tries = 0; tries < 400; tries++) {
    await sleep(25);
    if (!existsSync(store)) continue;
    try {
      if (storeRows(directory, 'shared', 'SELECT pid FROM run_lock').length > 0) break;
    } catch {
      // The schema is being created.
    }
  }
  const second = await runCli(args, { cwd: directory });
  assert.equal(second.code, 4, second.stderr);
  assert.match(second.stderr, new RegExp(`in use by process ${first.child.pid} on host \\S+`));
  const done = await first.done;
  assert.equal(done.code, 0, done.stderr);
  assert.equal(readRecords(directory, 'shared').length, 30);
  assert.equal(storeRows(directory, 'shared', 'SELECT pid FROM run_lock').length, 0, 'the lock is released at the end');
});

test('a fault that repeats fails for good: listed with its message, skipped by reruns, retried with --retry-failed', async (t) => {
  const directory = temporaryDirectory(t);
  let fixed = false;
  const script: ScriptFunction = (request) => {
    const prompt = String(request.messages.find((message) => message.role === 'user')?.content);
    if (prompt.includes('reject') && !fixed)
      return {
        fault: 'http',
        status: 400,
        body: { error: { message: "Unsupported parameter: 'top_k' is not supported with this model." } },
      };
    if (prompt.includes('huge'))
      return {
        fault: 'http',
        status: 400,
        body: {
          error: {
            message:
              "This model's maximum context length is 4096 tokens. However, your messages resulted in 9120 tokens.",
          },
        },
      };
    return { content: 'fine' };
  };
  const server = await startScriptedServer(script);
  t.after(() => server.close());
  const dataset = join(directory, 'retry.jsonl');
  writeJsonl(dataset, [
    { prompt: 'ok one' },
    { prompt: 'please reject me', id: 'rejected-row' },
    { prompt: 'huge context' },
    { prompt: 'ok two' },
  ]);
  const first = await runCli(batchArgs(dataset, 'retry', server.url), { cwd: directory });
  assert.equal(first.code, 1, first.stderr);
  assert.match(first.stderr, /1 prompts failed \(1 for good/);
  assert.match(
    first.stderr,
    /model_request_rejected ×1 \(e\.g\. rejected-row\): .*HTTP 400: Unsupported parameter: 'top_k'/,
  );
  assert.match(first.stderr, /--retry-failed/);
  assert.match(first.stdout, /model_request_rejected ×1 \(e\.g\. rejected-row\)/, 'the summary names it too');
  const stats = JSON.parse(readFileSync(join(directory, 'datasets', 'retry', 'statistics.json'), 'utf8'));
  assert.equal(stats.prompts.failures.model_request_rejected.count, 1);
  assert.equal(stats.prompts.failures.model_request_rejected.example_key, 'rejected-row');
  assert.match(
    stats.prompts.failures.model_request_rejected.first_message,
    /Unsupported parameter: 'top_k' is not supported with this model\.$/,
  );
  assert.equal(stats.prompts.failed_for_good, 1);
  assert.deepEqual(
    storeRows(
      directory,
      'retry',
      `SELECT status, error_class, error_code, attempts FROM items WHERE key = 'rejected-row'`,
    ),
    [{ status: 'failed', error_class: 'infra', error_code: 'model_request_rejected', attempts: 1 }],
  );
  const overflow = storeRows(
    directory,
    'retry',
    `SELECT status, error_class, error_code FROM items WHERE row_index = 2`,
  );
  // The agent loop turns the overflow into finish_reason context_length (nothing to compress in one
  // message); the run pipeline stores it as the agent's outcome, not an infra failure.
  assert.deepEqual(
    overflow,
    [{ status: 'done', error_class: 'agent', error_code: 'context_length' }],
    "a context overflow is the agent's outcome, not an infra failure",
  );

  fixed = true;
  const before = server.requestCount();
  const again = await runCli(batchArgs(dataset, 'retry', server.url), { cwd: directory });
  assert.equal(again.code, 1, 'a prompt failed for good still fails the run');
  assert.equal(server.requestCount(), before, 'and is not sent again without --retry-failed');
  const retried = await runCli(batchArgs(dataset, 'retry', server.url, ['--retry-failed']), { cwd: directory });
  assert.equal(retried.code, 0, retried.stderr);
  assert.match(retried.stderr, /--retry-failed: 1 failed prompts get fresh attempts/);
  assert.equal(readRecords(directory, 'retry').length, 4);
});

test('no Docker engine for a docker run: one run-level fault before any rollout (exit 4), nothing used', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript);
  t.after(() => server.close());
  const dataset = join(directory, 'engine.jsonl');
  writeJsonl(dataset, prompts(5));
  const result = await runCli(batchArgs(dataset, 'engine', server.url, ['--sandbox', 'docker']), {
    cwd: directory,
    env: { DOCKER_HOST: `unix://${join(directory, 'no-engine.sock')}` },
  });
  assert.equal(result.code, 4, result.stderr);
  assert.match(result.stderr, /no Docker engine answered at DOCKER_HOST=unix:\/\/.*no-engine\.sock/);
  assert.equal(count(directory, 'engine', '1 = 1'), 0);
  assert.equal(server.requestCount(), 0, 'no prompt reached the model');
});

test('traj bench with a missing sandbox image: one run-level fault (exit 4), not every task BROKEN; with the image there, the rerun completes', async (t) => {
  const reason = await dockerUnavailableReason();
  if (reason && !dockerRequired()) return t.skip(reason);
  const directory = temporaryDirectory(t);
  const tag = `traj-test-missing-${process.pid}:absent`;
  const args = [
    'bench',
    'demo',
    '--agent',
    'oracle',
    '--sandbox',
    'docker',
    '--image',
    tag,
    '--run',
    'missing-image',
    '--tasks',
    join(projectRoot(), 'benchmarks', 'tasks'),
  ];
  const missing = await runCli(args, { cwd: directory });
  assert.equal(missing.code, 4, `${missing.stdout}\n${missing.stderr}`);
  assert.match(missing.stderr, new RegExp(`the sandbox image '${tag}' is not on this Docker engine`));
  assert.doesNotMatch(missing.stdout, /BROKEN/);
  assert.equal(count(directory, 'missing-image', '1 = 1'), 0, 'no task ran');

  execFileSync('docker', ['tag', 'traj-sandbox:bookworm', tag]);
  t.after(() => execFileSync('docker', ['rmi', tag], { stdio: 'ignore' }));
  const rerun = await runCli(args, { cwd: directory });
  assert.equal(rerun.code, 0, `${rerun.stdout}\n${rerun.stderr}`);
  assert.match(rerun.stdout, /validation \(oracle agent\): all 3 rollouts scored 1\.0/);
});
