import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { callTool, conversationScript, reply, startScriptedServer, type ChatRequest } from '../../src/testing/index.js';
import { projectRoot } from '../../src/util/paths.js';
import { chromiumMissing, launchChromium } from '../helpers/chromium.js';
import { runCli, startCli, temporaryDirectory, type CliResult } from '../helpers/cli.js';

/**
 * `traj view` driven by headless Chromium (Debian's, through playwright-core) over two real
 * `traj eval` runs of the rubric environment against the scripted server: the runs list,
 * filtering, a trajectory with a tool call, reasoning and judge verdicts, plots, compare. The
 * model's markup must show as text and never run. Screenshots land in test-results/.
 */
const INJECTION =
  'A haiku, of sorts. <script>document.title = "pwned"</script><img src=x onerror="document.title = \'pwned\'"> & "quoted"';
const REASONING = 'The user wants facts; check the sandbox first.';

const userText = (request: ChatRequest) =>
  String(request.messages.find((message) => message.role === 'user')?.content ?? '');

/**
 * A policy that looks around with `terminal` (reasoning on that turn), then answers; `hostile` answers the haiku
 * with markup. The good policy's provider reports $0.01 a call (usage.cost); the hostile one reports no cost.
 */
function policy(hostile: boolean) {
  const usage = hostile ? {} : { usage: { cost: 0.01 } };
  return conversationScript([
    callTool('terminal', { command: 'echo sandbox-ok' }, { reasoning_content: REASONING, ...usage }),
    (request) =>
      reply(
        hostile && userText(request).includes('haiku') ? INJECTION : `My answer to: ${userText(request).slice(0, 60)}`,
        usage,
      ),
  ]);
}

async function waitForUrl(child: ReturnType<typeof startCli>): Promise<string> {
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`traj view printed no URL: ${output}`)), 30_000);
    child.child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /traj view: (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.done.then((result: CliResult) => reject(new Error(`traj view exited ${result.code}: ${result.stderr}`)));
  });
}

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(join(projectRoot(), 'test-results'), { recursive: true });
  const file = join(projectRoot(), 'test-results', name);
  await page.screenshot({ path: file, fullPage: name !== 'view-runs.png' });
  assert.ok(readFileSync(file).length > 5_000, `${name} has content`);
}

describe('traj view in a browser', () => {
  it('lists runs, filters, opens a trajectory with tool call, reasoning and verdicts, plots and compares; markup stays text', async (t) => {
    if (chromiumMissing(t)) return;
    const directory = temporaryDirectory(t);
    const good = await startScriptedServer(policy(false));
    const hostile = await startScriptedServer(policy(true));
    const judges = await startScriptedServer((request) => {
      const markup = JSON.stringify(request.messages).includes('<script>');
      return reply(
        JSON.stringify({
          reasoning: markup ? 'The answer is markup, not a haiku.' : 'Meets the rubric.',
          score: markup ? 1 : 9,
          pass: !markup,
        }),
      );
    });
    t.after(() => Promise.all([good.close(), hostile.close(), judges.close()]).then(() => undefined));
    const evalArgs = (run: string, url: string) => [
      'eval',
      '--env',
      'rubric',
      '--run',
      run,
      '--toolsets',
      'terminal',
      '--max-turns',
      '3',
      '--workers',
      '1',
      '--concurrency',
      '4',
      '--base-url',
      url,
      '--model',
      `policy-${run}`,
      '--api-key-env',
      'NO_KEY',
      '--judge-model',
      'judge-a',
      '--judge-base-url',
      judges.url,
      '--judge-api-key-env',
      'NO_KEY',
    ];
    for (const [run, server] of [
      ['good', good],
      ['hostile', hostile],
    ] as const) {
      const result = await runCli(evalArgs(run, server.url), { cwd: directory });
      assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    }

    const viewer = startCli(['view', '--port', '0'], { cwd: directory, env: { TRAJ_HOME: join(directory, 'home') } });
    t.after(() => viewer.child.kill('SIGKILL'));
    const url = await waitForUrl(viewer);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/$/, 'bound to loopback by default');

    const browser = await launchChromium(t);
    const page = await browser.newPage({ viewport: { width: 1280, height: 760 } });
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));

    // The runs list.
    await page.goto(url);
    assert.deepEqual(
      (await page.$$eval('tr[data-run]', (rows) => rows.map((row) => row.getAttribute('data-run')))).sort(),
      ['good', 'hostile'],
    );
    assert.equal(
      await page.$eval('tr[data-run="good"] [data-field="mean-reward"]', (cell) => cell.textContent),
      '0.900',
    );
    assert.equal(await page.$eval('tr[data-run="hostile"] [data-status="done"]', (cell) => cell.textContent), 'done 4');
    // 4 items × 2 policy calls × $0.01; the judge's price is unknown, which the cell says instead of adding 0.
    assert.equal(
      await page.$eval('tr[data-run="good"] [data-field="cost"]', (cell) => cell.textContent),
      '$0.08 + unknown (no price known for judge-a)',
    );
    assert.equal(
      await page.$eval('tr[data-run="hostile"] [data-field="cost"]', (cell) => cell.textContent),
      'unknown (no price known for judge-a, policy-hostile)',
    );
    await screenshot(page, 'view-runs.png');

    // The trajectory table, filtered by the form.
    await page.click('tr[data-run="hostile"] a');
    assert.equal(await page.locator('table.items tbody tr').count(), 4);
    await page.fill('input[name="q"]', 'lighthouse');
    await page.selectOption('select[name="status"]', 'done');
    await page.click('form[data-form="filters"] button');
    assert.match(page.url(), /status=done/);
    assert.deepEqual(
      await page.$$eval('table.items tbody tr', (rows) => rows.map((row) => row.getAttribute('data-key'))),
      ['rubric-haiku'],
    );
    await page.fill('input[name="q"]', '');
    await page.fill('input[name="min"]', '0.5');
    await page.click('form[data-form="filters"] button');
    assert.equal(
      await page.locator('table.items tbody tr').count(),
      3,
      'reward ≥ 0.5 leaves the three passing answers',
    );
    await page.click('th a[data-sort="reward"]');
    assert.match(page.url(), /sort=reward&order=desc/);
    await screenshot(page, 'view-table.png');

    // One trajectory: reasoning collapsed, the tool call with its result, the judge's verdict, the fork line.
    await page.goto(`${url}runs/hostile`);
    await page.click('tr[data-key="rubric-haiku"] a');
    const reasoning = page.locator('details.reasoning').first();
    assert.equal(
      await reasoning.evaluate((element) => element.hasAttribute('open')),
      false,
      'reasoning starts collapsed',
    );
    assert.equal(await page.getByText(REASONING, { exact: true }).isVisible(), false);
    await reasoning.locator('summary').click();
    assert.ok(await page.getByText(REASONING, { exact: true }).isVisible());
    const call = page.locator('.call').first();
    assert.equal(await call.locator('.tool').textContent(), 'terminal');
    assert.match((await call.textContent())!, /"command": "echo sandbox-ok"/);
    assert.match((await call.locator('.result').textContent())!, /sandbox-ok/, 'the result sits under its call');
    assert.equal(await page.$eval('[data-judge="judge-a"] .verdict', (element) => element.textContent), 'fail');
    assert.match((await page.locator('[data-judge="judge-a"]').textContent())!, /The answer is markup, not a haiku\./);
    assert.equal(
      await page.$eval('[data-field="fork"]', (element) => element.textContent),
      'traj chat --fork hostile rubric-haiku',
    );
    assert.ok(await page.getByText(INJECTION, { exact: true }).isVisible(), "the model's markup shows as text");
    assert.equal(await page.evaluate('document.scripts.length'), 0);
    assert.equal(await page.evaluate("document.querySelectorAll('img').length"), 0);
    assert.match(await page.title(), /^traj view · hostile · rubric-haiku #0$/, 'nothing the model wrote ran');
    assert.equal(
      await page.$eval('.facts [data-field="cost"]', (element) => element.textContent),
      'unknown (no price known for policy-hostile, judge-a)',
    );
    await screenshot(page, 'view-trajectory.png');
    await page.goto(`${url}runs/good/item?key=rubric-haiku&sample=0`);
    assert.equal(
      await page.$eval('.facts [data-field="cost"]', (element) => element.textContent),
      '$0.02 + unknown (no price known for judge-a)',
      "one rollout's two policy calls; the judge's share is unknown",
    );

    // The plots, drawn from the store.
    await page.goto(`${url}runs/good/plots`);
    const counts = await page.$$eval('svg[data-plot="reward"] rect.bar', (bars) =>
      bars.map((bar) => Number(bar.getAttribute('data-count'))),
    );
    assert.equal(
      counts.reduce((sum, count) => sum + count, 0),
      4,
    );
    for (const plot of ['turns', 'tokens', 'duration', 'throughput'])
      assert.ok((await page.locator(`svg[data-plot="${plot}"] rect.bar`).count()) > 0, plot);
    assert.equal(
      await page.$eval('g[data-toolsets="terminal"]', (group) => group.getAttribute('data-completion')),
      '1',
    );
    const width = await page.$eval(
      'g[data-toolsets="terminal"] rect.bar',
      (bar) => (bar as unknown as { getBBox(): { width: number } }).getBBox().width,
    );
    assert.ok(width > 400, `a full completion bar (${width})`);
    await screenshot(page, 'view-plots.png');

    // Compare, from the form on the runs page: the haiku regressed.
    await page.goto(url);
    await page.selectOption('select[name="a"]', 'good');
    await page.selectOption('select[name="b"]', 'hostile');
    await page.click('form[data-form="compare"] button');
    assert.equal(
      await page.$eval('tr[data-compare-key="rubric-haiku"] [data-field="change"]', (cell) => cell.textContent),
      'regressed',
    );
    assert.equal(
      await page.$eval('[data-metric="pass_rate_difference"]', (cell) => cell.getAttribute('data-value')),
      String(-0.25),
    );
    assert.match(await page.$eval('[data-metric="mean_reward_difference"]', (cell) => cell.textContent!), /^-0\.200$/);
    await screenshot(page, 'view-compare.png');

    assert.deepEqual(
      requests.filter((request) => !request.startsWith(url)),
      [],
      'every request goes to the viewer itself',
    );
    viewer.child.kill('SIGINT');
    const exit = await viewer.done;
    assert.equal(exit.code, 0, exit.stderr);
    assert.match(exit.stdout, /stopped by SIGINT/);
    assert.equal(exit.stderr, '', 'no warning on loopback');
  });

  it('warns when bound beyond loopback, and names a missing store', async (t) => {
    const directory = temporaryDirectory(t);
    const open = startCli(['view', '--host', '0.0.0.0', '--port', '0'], {
      cwd: directory,
      env: { TRAJ_HOME: join(directory, 'home') },
    });
    t.after(() => open.child.kill('SIGKILL'));
    const url = await waitForUrl(open);
    assert.match(url, /^http:\/\/0\.0\.0\.0:\d+\/$/);
    open.child.kill('SIGTERM');
    const result = await open.done;
    assert.equal(result.code, 0);
    assert.match(
      result.stderr,
      /WARNING: listening on 0\.0\.0\.0, not loopback: anyone who can reach this address can read every trajectory/,
    );

    const missing = await runCli(['view', 'no-such-run', '--port', '0'], { cwd: directory });
    assert.equal(missing.code, 2, 'a missing store is a usage error (exit 2)');
    assert.match(missing.stderr, /no run store at .*checkpoints\/no-such-run\.sqlite/);
  });
});
