import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { RunComparison } from '../../src/report/run-comparison.js';
import { newcombeDifference } from '../../src/report/run-comparison.js';
import type { EvalReport } from '../../src/report/report-schema.js';
import {
  callTool,
  conversationScript,
  reply,
  startScriptedServer,
  type ChatRequest,
  type ScriptFunction,
} from '../../src/testing/index.js';
import { projectRoot } from '../../src/util/paths.js';
import { chromiumMissing, launchChromium } from '../helpers/chromium.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

/**
 * report.html in a real headless browser (Debian's chromium driven by playwright-core): it
 * renders offline, shows exactly the numbers of report.json, escapes what the model wrote, and
 * a screenshot lands in test-results/report.png. Then `traj bench compare` on the two runs.
 */
const INJECTION =
  'I could not fix it. <script>document.title = "pwned"</script><img src=x onerror="document.title = \'pwned\'"> & "quoted"';

/** Model B: solves the greeting and the log report, gives up on the script with an answer full of markup. */
const modelB: ScriptFunction = (request: ChatRequest, context) => {
  const task = String(request.messages.find((message) => message.role === 'user')?.content ?? '');
  if (task.includes('greeting.txt'))
    return conversationScript([
      callTool('terminal', { command: "printf 'Hello from traj!\\n' > greeting.txt" }),
      reply('Created greeting.txt.'),
    ])(request, context);
  if (task.includes('errors.txt')) {
    const command =
      '{ awk \'$3 == "ERROR"\' logs/*.log | wc -l; for f in api.log worker.log; do echo "$f $(awk \'$3 == "ERROR"\' logs/$f | wc -l)"; done; } > errors.txt && cat errors.txt';
    return conversationScript([callTool('terminal', { command }), reply('Wrote errors.txt.')])(request, context);
  }
  return reply(INJECTION);
};

describe('the HTML report and run comparison', () => {
  it('renders in headless chromium with the numbers of report.json, escaped transcripts and no network; compare reports the deltas', async (t) => {
    if (chromiumMissing(t)) return;
    const directory = temporaryDirectory(t);
    const server = await startScriptedServer(modelB);
    t.after(() => server.close());
    const a = await runCli(['bench', 'demo', '--agent', 'oracle', '--sandbox', 'local', '--run', 'demo-a'], {
      cwd: directory,
    });
    assert.equal(a.code, 0, `${a.stdout}\n${a.stderr}`);
    const b = await runCli(
      [
        'bench',
        'demo',
        '--sandbox',
        'local',
        '--run',
        'demo-b',
        '--base-url',
        server.url,
        '--model',
        'scripted-b',
        '--api-key-env',
        'NO_KEY',
      ],
      { cwd: directory },
    );
    assert.equal(b.code, 0, `${b.stdout}\n${b.stderr}`);
    assert.match(b.stdout, /html report: datasets\/demo-b\/report\.html/);
    const report = JSON.parse(readFileSync(join(directory, 'datasets', 'demo-b', 'report.json'), 'utf8')) as EvalReport;
    assert.equal(report.summary.pass_rate.value, 2 / 3, 'the scenario: two of three tasks solved');

    const browser = await launchChromium(t);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    const file = join(directory, 'datasets', 'demo-b', 'report.html');
    await page.goto(`file://${file}`);

    assert.deepEqual(requests, [`file://${file}`], 'the page loads nothing but itself');
    assert.equal(await page.evaluate('document.scripts.length'), 0);
    assert.equal(
      await page.evaluate("document.querySelectorAll('img, link, iframe, a').length"),
      0,
      'no images, stylesheets, frames or links',
    );
    assert.equal(await page.title(), 'traj report · demo-b');

    const shown = (name: string) =>
      page.$eval(`[data-metric="${name}"]`, (element) => ({
        text: element.textContent,
        value: element.getAttribute('data-value'),
      }));
    const { summary } = report;
    assert.deepEqual(await shown('pass_rate'), {
      text: summary.pass_rate.value!.toFixed(3),
      value: String(summary.pass_rate.value),
    });
    assert.deepEqual(await shown('mean_reward'), {
      text: summary.mean_reward.value!.toFixed(3),
      value: String(summary.mean_reward.value),
    });
    assert.deepEqual(await shown('rollouts'), { text: String(summary.rollouts), value: String(summary.rollouts) });
    assert.deepEqual(await shown('failed'), { text: String(summary.failed), value: String(summary.failed) });
    assert.deepEqual(await shown('reward_errors'), {
      text: String(summary.reward_errors),
      value: String(summary.reward_errors),
    });
    assert.equal((await shown('tokens')).text, String(summary.tokens.prompt + summary.tokens.completion));
    assert.ok(summary.tokens.prompt > 0);
    assert.equal((await shown('pass_at_1')).text, summary.pass_at_k['1']!.toFixed(3));
    const ci = await page.$eval('[data-metric="pass_rate_ci"]', (element) => element.textContent);
    assert.equal(ci, `95% CI [${summary.pass_rate.low!.toFixed(3)}, ${summary.pass_rate.high!.toFixed(3)}]`);

    const rows = await page.$$eval('tr[data-key]', (elements) =>
      elements.map((row) => ({
        key: row.getAttribute('data-key'),
        sample: Number(row.getAttribute('data-sample')),
        status: row.querySelector('[data-field="status"]')!.textContent,
        reward: row.querySelector('[data-field="reward"]')!.textContent,
        turns: Number(row.querySelector('[data-field="turns"]')!.textContent),
        tokens: Number(row.querySelector('[data-field="tokens"]')!.textContent),
      })),
    );
    assert.equal(rows.length, report.items.length);
    for (const item of report.items) {
      const row = rows.find((candidate) => candidate.key === item.key && candidate.sample === item.sample);
      assert.deepEqual(row, {
        key: item.key,
        sample: item.sample,
        status: item.passed ? 'passed' : 'failed',
        reward: item.reward!.toFixed(3),
        turns: item.turns,
        tokens: item.tokens,
      });
    }
    const bars = await page.$$eval('svg.chart g[data-category]', (groups) =>
      groups.map((group) => [group.getAttribute('data-category'), Number(group.getAttribute('data-pass-rate'))]),
    );
    assert.deepEqual(
      bars,
      report.by_category.map((row) => [row.category, row.pass_rate.value]),
    );
    const debugging = await page.$eval(
      'svg.chart g[data-category="debugging"] rect.bar',
      (bar) => (bar as unknown as { getBBox(): { width: number } }).getBBox().width,
    );
    assert.equal(debugging, 0, 'the unsolved category draws an empty bar');
    const solved = await page.$eval(
      'svg.chart g[data-category="file-operations"] rect.bar',
      (bar) => (bar as unknown as { getBBox(): { width: number } }).getBBox().width,
    );
    assert.ok(solved > 400, `a solved category draws a full bar (${solved})`);

    assert.equal(await page.locator('details.transcript').count(), report.items.length);
    const broken = page.locator('details.transcript[data-transcript="fix-broken-script#0"]');
    assert.equal(
      await broken.evaluate((element) => element.hasAttribute('open')),
      false,
      'transcripts start collapsed',
    );
    await broken.locator(':scope > summary').click();
    assert.equal(await broken.evaluate((element) => element.hasAttribute('open')), true);
    assert.ok(await broken.getByText(INJECTION, { exact: true }).isVisible(), "the model's markup shows as text");
    assert.match(await broken.innerText(), /FAILED sum\.sh::args\[2,3\] - expected 5/);
    assert.equal(await page.title(), 'traj report · demo-b', 'nothing the model wrote ran');

    mkdirSync(join(projectRoot(), 'test-results'), { recursive: true });
    const screenshot = join(projectRoot(), 'test-results', 'report.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    assert.ok(readFileSync(screenshot).length > 10_000);

    const compared = await runCli(['bench', 'compare', 'demo-a', 'demo-b'], { cwd: directory });
    assert.equal(compared.code, 0, compared.stderr);
    assert.match(
      compared.stdout,
      /A = demo-a \(oracle, terminal-tasks 1\)\nB = demo-b \(scripted-b, terminal-tasks 1\)/,
    );
    assert.match(
      compared.stdout,
      /pass rate\s+1\.000 \[0\.439, 1\.000\]\s+0\.667 \[0\.208, 0\.939\]\s+-0\.333 \[-0\.792, \+0\.291\]/,
    );
    assert.match(compared.stdout, /fix-broken-script\s+1\.000\s+0\.000\s+-1\.000\s+1\/1\s+0\/1\s+regressed/);
    assert.match(compared.stdout, /items: 3 \(fixed 0, regressed 1, better 0, worse 0, only_a 0, only_b 0, same 2\)/);
    const json = await runCli(
      ['bench', 'compare', 'demo-a', join(directory, 'datasets', 'demo-b', 'report.json'), '--json'],
      { cwd: directory },
    );
    const comparison = JSON.parse(json.stdout) as RunComparison;
    assert.deepEqual(comparison.pass_rate.difference, {
      value: 2 / 3 - 1,
      low: -0.7923403991979523,
      high: 0.2905069164363784,
    });
    assert.equal(comparison.mean_reward.shared_items, 3);
    assert.ok(Math.abs(comparison.mean_reward.difference.value! + 1 / 3) < 1e-12);
    assert.deepEqual(
      [comparison.mean_reward.difference.low, comparison.mean_reward.difference.high],
      [-1, 1],
      'the paired t interval (−1.768, +1.101 for 3 items) clipped to [-1, 1]',
    );
    const rescored = await runCli(['eval', '--rescore', 'demo-b'], { cwd: directory });
    assert.equal(rescored.code, 0, rescored.stderr);
    assert.match(rescored.stderr, /each reward gets a fresh sandbox with the recorded tool calls replayed/);
    const again = JSON.parse(readFileSync(join(directory, 'datasets', 'demo-b', 'report.json'), 'utf8')) as EvalReport;
    assert.deepEqual(
      again.items.map((item) => [item.key, item.reward]).sort(),
      report.items.map((item) => [item.key, item.reward]).sort(),
      'replaying the recorded tool calls in a fresh sandbox gives the same rewards',
    );
    const missing = await runCli(['bench', 'compare', 'demo-a', 'nothing-here'], { cwd: directory });
    assert.equal(missing.code, 2, 'a missing report is a usage error (exit 2)');
    assert.match(missing.stderr, /no report for 'nothing-here'/);
  });

  it("Newcombe's interval reproduces the worked example of Newcombe (1998): 56/70 vs 48/80 → 0.200 [0.0524, 0.3339]", () => {
    const difference = newcombeDifference({ successes: 48, n: 80 }, { successes: 56, n: 70 });
    assert.ok(Math.abs(difference.value! - 0.2) < 1e-12);
    assert.equal(difference.low!.toFixed(4), '0.0524');
    assert.equal(difference.high!.toFixed(4), '0.3339');
    assert.deepEqual(newcombeDifference({ successes: 0, n: 0 }, { successes: 1, n: 2 }), {
      value: null,
      low: null,
      high: null,
    });
  });
});
