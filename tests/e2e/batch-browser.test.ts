import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { callTool, delayed, reply, startScriptedServer, type ChatRequest } from '../../src/testing/index.js';
import { findChromium, PROFILE_PREFIX, processesUsing } from '../../src/tools/index.js';
import type { TrajectoryRecord } from '../../src/trajectory/record.js';
import { startBrowserSite } from '../helpers/browser-site.js';
import { runCli, startCli, temporaryDirectory } from '../helpers/cli.js';

const PROMPTS = 20;
const skip = findChromium() ? false : 'skipped: no chromium on PATH (apt-get install chromium)';

/**
 * Each rollout looks for a cookie (none may be there), sets its own, reads it back, and answers
 * with what the three pages said. `slow` holds the second model turn so browsers are open when
 * the test kills traj.
 */
function agentScript(site: string, options: { slow: boolean }) {
  return (request: ChatRequest) => {
    const n =
      /task (\d+)/.exec(String(request.messages.find((message) => message.role === 'user')?.content))?.[1] ?? 'x';
    const seen = request.messages
      .filter((message) => message.role === 'tool')
      .map((message) => /token is \w+/.exec(String(message.content))?.[0] ?? '-');
    switch (seen.length) {
      case 0:
        return callTool('browser_navigate', { url: `${site}/show-cookie` });
      case 1: {
        const next = callTool('browser_navigate', { url: `${site}/set-cookie?value=r${n}` });
        return options.slow ? delayed(60_000, next) : next;
      }
      case 2:
        return callTool('browser_navigate', { url: `${site}/show-cookie` });
      default:
        return reply(`task ${n}: ${seen.join(', ')}`);
    }
  };
}

/** Profile folders and browser processes a traj process (by pid) left behind. */
function leftovers(pid: number, root = tmpdir()): { folders: string[]; processes: number[] } {
  const prefix = `${PROFILE_PREFIX}${pid}-`;
  return {
    folders: readdirSync(root).filter((name) => name.startsWith(prefix)),
    processes: processesUsing(join(root, prefix)),
  };
}

async function waitFor(condition: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The most rollouts that were running at one moment, from the records' timings. */
function maxOverlap(all: TrajectoryRecord[]): number {
  const edges = all.flatMap((record) => {
    const start = Date.parse(record.timing.started_at);
    return [
      [start, 1],
      [start + record.timing.duration_ms, -1],
    ] as const;
  });
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let running = 0;
  let most = 0;
  for (const [, step] of edges) most = Math.max(most, (running += step));
  return most;
}

function records(directory: string, run: string): TrajectoryRecord[] {
  return readFileSync(join(directory, 'datasets', run, 'trajectories.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TrajectoryRecord);
}

function setup(t: { after(fn: () => unknown): void }) {
  const directory = temporaryDirectory(t);
  const dataset = join(directory, 'prompts.jsonl');
  writeFileSync(
    dataset,
    `${Array.from({ length: PROMPTS }, (_, index) => JSON.stringify({ prompt: `task ${index}: check the cookie` })).join('\n')}\n`,
  );
  const config = join(directory, 'run.yaml');
  // Debian's chromium found on PATH; the site is on 127.0.0.1, so private addresses are allowed.
  writeFileSync(config, stringify({ web: { allow_private: true }, browser: { navigation_timeout_ms: 30_000 } }));
  return { directory, dataset, config, env: { TRAJ_HOME: join(directory, 'home') } };
}

test(`a ${PROMPTS}-prompt batch with --toolsets browser at concurrency 8: isolated contexts, browser calls in every record, no chromium left`, {
  skip,
}, async (t) => {
  const { directory, dataset, config, env } = setup(t);
  const site = await startBrowserSite();
  t.after(() => site.close());
  const server = await startScriptedServer(agentScript(site.url, { slow: false }));
  t.after(() => server.close());
  const args = [
    'batch',
    '--config',
    config,
    '--dataset',
    dataset,
    '--run',
    'browse',
    '--base-url',
    server.url,
    '--model',
    'agent',
    '--api-key-env',
    'NO_KEY',
  ];
  const run = startCli([...args, '--toolsets', 'browser', '--workers', '2', '--concurrency', '8'], {
    cwd: directory,
    env,
  });
  const result = await run.done;
  assert.equal(result.code, 0, result.stderr);

  const all = records(directory, 'browse');
  assert.equal(all.length, PROMPTS);
  for (const record of all) {
    const n = /task (\d+)/.exec(JSON.stringify(record.messages[1]!.content))![1];
    assert.equal(record.finish_reason, 'stop', JSON.stringify(record.error));
    // Isolation: the first look finds no cookie, though up to 7 other rollouts set theirs in the same browsers.
    assert.equal(record.messages.at(-1)!.content, `task ${n}: token is absent, -, token is r${n}`);
    assert.deepEqual(record.tool_stats, [{ name: 'browser_navigate', calls: 3, ok: 3, errors: 0 }]);
    assert.deepEqual(record.toolsets, ['browser']);
  }
  assert.ok(maxOverlap(all) > 1, 'rollouts ran concurrently');
  const pid = run.child.pid!;
  assert.deepEqual(leftovers(pid), { folders: [], processes: [] }, 'no chromium process or profile left after the run');
});

test("SIGKILL of traj mid-run leaves no chromium running; the rerun prunes the dead run's profiles and leaves nothing", {
  skip,
}, async (t) => {
  const { directory, dataset, config, env: base } = setup(t);
  // A temp dir of the test's own: what the runs leave in it can be listed whole.
  const temp = join(directory, 'tmp');
  mkdirSync(temp);
  const env = { ...base, TMPDIR: temp };
  const site = await startBrowserSite();
  t.after(() => site.close());
  const pace = { slow: true };
  const server = await startScriptedServer(agentScript(site.url, pace));
  t.after(() => server.close());
  const args = [
    'batch',
    '--config',
    config,
    '--dataset',
    dataset,
    '--run',
    'killed',
    '--model',
    'agent',
    '--api-key-env',
    'NO_KEY',
    '--toolsets',
    'browser',
  ];
  args.push('--base-url', server.url, '--workers', '2', '--concurrency', '8');
  const first = startCli(args, { cwd: directory, env });
  const pid = first.child.pid!;
  t.after(() => first.child.kill('SIGKILL'));
  // Wait until browsers run and rollouts sit in the slow second turn, their contexts open.
  await waitFor(() => leftovers(pid, temp).processes.length > 0 && server.requests.length >= 8, 'browsers to start');
  const before = leftovers(pid, temp);
  assert.ok(before.folders.length >= 1, 'a profile folder per browser, named by the owner pid');
  first.child.kill('SIGKILL');
  await first.done;
  // Chromium ends when its DevTools pipe to the dead traj closes.
  await waitFor(() => leftovers(pid, temp).processes.length === 0, 'the orphaned chromium processes to exit', 30_000);
  // (The other thread may have started its browser after `before` was taken: a superset is fine.)
  const after = leftovers(pid, temp).folders;
  assert.ok(
    before.folders.every((folder) => after.includes(folder)),
    'a SIGKILL leaves the profile folders behind',
  );

  pace.slow = false;
  const rerun = startCli(args, { cwd: directory, env });
  const result = await rerun.done;
  assert.equal(result.code, 0, result.stderr);
  assert.equal(records(directory, 'killed').length, PROMPTS);
  assert.deepEqual(leftovers(pid, temp), { folders: [], processes: [] }, "the rerun pruned the killed run's profiles");
  assert.deepEqual(
    leftovers(rerun.child.pid!, temp),
    { folders: [], processes: [] },
    'the rerun left nothing of its own',
  );
  assert.deepEqual(readdirSync(temp), [], 'nothing else is left in the temp dir (playwright-artifacts-* included)');
});

test('an unknown key under browser: is an error naming the file and key', async (t) => {
  const directory = temporaryDirectory(t);
  const config = join(directory, 'bad.yaml');
  writeFileSync(config, stringify({ browser: { executabel: '/usr/bin/chromium' } }));
  const result = await runCli(
    [
      'batch',
      '--config',
      config,
      '--dataset',
      'x.jsonl',
      '--run',
      'bad',
      '--base-url',
      'http://127.0.0.1:1/v1',
      '--model',
      'm',
    ],
    {
      cwd: directory,
      env: { TRAJ_HOME: join(directory, 'home') },
    },
  );
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /bad\.yaml.*browser.*executabel: unknown key \(did you mean 'executable'\?\)/);
});

test('browser_vision: the screenshot goes to the vision model and is kept beside the run store; the record lists it', {
  skip,
}, async (t) => {
  const directory = temporaryDirectory(t);
  const site = await startBrowserSite();
  t.after(() => site.close());
  const server = await startScriptedServer((request: ChatRequest) => {
    if (request.model === 'vision-x') {
      const parts = request.messages[0]!.content as Array<{ type: string; image_url?: { url: string } }>;
      return reply(
        parts.some((part) => part.image_url?.url.startsWith('data:image/png;base64,'))
          ? 'a page with a login form'
          : 'no image',
      );
    }
    const tools = request.messages.filter((message) => message.role === 'tool').length;
    if (tools === 0) return callTool('browser_navigate', { url: `${site.url}/login` });
    if (tools === 1) return callTool('browser_vision', { question: 'what does the page show?' });
    return reply(String(request.messages.at(-1)!.content));
  });
  t.after(() => server.close());
  const dataset = join(directory, 'two.jsonl');
  writeFileSync(dataset, '{"prompt": "look at the login page"}\n{"prompt": "look at the login page again"}\n');
  const config = join(directory, 'run.yaml');
  writeFileSync(config, stringify({ web: { allow_private: true }, auxiliary: { vision: { model: 'vision-x' } } }));
  const args = [
    'batch',
    '--config',
    config,
    '--dataset',
    dataset,
    '--run',
    'shots',
    '--base-url',
    server.url,
    '--model',
    'agent',
    '--api-key-env',
    'NO_KEY',
    '--toolsets',
    'browser',
  ];
  const result = await runCli(args, { cwd: directory, env: { TRAJ_HOME: join(directory, 'home') } });
  assert.equal(result.code, 0, result.stderr);
  const all = records(directory, 'shots');
  assert.equal(all.length, 2);
  const paths = new Set<string>();
  for (const record of all) {
    assert.equal(record.artifacts.length, 1);
    const [path] = record.artifacts;
    assert.ok(path!.startsWith(`${join(directory, 'checkpoints', 'shots.artifacts')}/`), path);
    assert.deepEqual([...readFileSync(path!).subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'a PNG');
    paths.add(path!);
    const answer = JSON.parse(String(record.messages.at(-1)!.content));
    assert.deepEqual(answer, {
      answer: 'a page with a login form',
      model: 'vision-x',
      url: `${site.url}/login`,
      screenshot: path,
    });
  }
  assert.equal(paths.size, 2, 'each rollout keeps its own screenshot');
});
