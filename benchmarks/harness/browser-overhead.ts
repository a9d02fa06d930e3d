import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import pLimit from 'p-limit';
import { BrowserConfigSchema, type BrowserConfig } from '../../src/config/browser.js';
import { WebConfigSchema, type WebConfig } from '../../src/config/web.js';
import { createLocalSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { BrowserEngine, BrowserSession, findChromium } from '../../src/tools/browser/index.js';

interface Timing {
  total: number;
  context: number;
  snapshot: number;
  close: number;
}

/** A small page like the ones agents read first: a heading, a form, links, a list. */
const PAGE = `<!doctype html><title>Bench</title><h1>Benchmark page</h1><form><label>Search <input name=q></label><button>Go</button></form>
<ul>${Array.from({ length: 20 }, (_, index) => `<li><a href="/item/${index}">Item ${index}</a> with some text</li>`).join('')}</ul>`;

/**
 * What the browser toolset adds to a rollout once the thread's browser runs: a fresh isolated
 * context (with the network-policy route), its first page load and snapshot (what
 * browser_navigate returns), and closing the context at the end of the rollout. p50/p95 at
 * concurrency 1 and 8; the browser's own start is measured once, apart.
 */
export async function browserOverheadBenchmark(
  options: { iterations?: number } = {},
): Promise<Record<string, unknown>> {
  if (!findChromium()) throw new Error('no chromium on PATH (apt-get install chromium)');
  const iterations = options.iterations ?? 40;
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end(PAGE);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const config = BrowserConfigSchema.parse({});
  const policy = WebConfigSchema.parse({ allow_private: true });
  const engine = new BrowserEngine(config);
  const sandbox = await createLocalSandbox();
  try {
    const launchStarted = performance.now();
    await once(engine, config, policy, sandbox, url); // starts the browser; its page cache warms
    const firstRollout = performance.now() - launchStarted;
    const c1 = await measure(iterations, 1, () => once(engine, config, policy, sandbox, url));
    const c8 = await measure(iterations, 8, () => once(engine, config, policy, sandbox, url));
    if (engine.openContexts !== 0) throw new Error(`${engine.openContexts} contexts left open`);
    const figures = {
      iterations,
      load_average_1m: round(loadavg()[0]!, 1),
      first_rollout_with_launch_ms: round(firstRollout),
      c1_p50_ms: c1.p50,
      c1_p95_ms: c1.p95,
      c8_p50_ms: c8.p50,
      c8_p95_ms: c8.p95,
      c8_per_second: c8.perSecond,
      c1_steps_p50_ms: c1.steps,
      c8_steps_p50_ms: c8.steps,
    };
    const cells = (...values: Array<string | number>) => values.map((value) => String(value).padStart(8)).join('');
    const row = (name: string, series: typeof c1) =>
      `   ${name.padEnd(30)}${cells(series.p50, series.p95, series.perSecond)}`;
    process.stdout.write(
      `${[
        `   ${'context → snapshot → close'.padEnd(30)}${'p50 ms'.padStart(8)}${'p95 ms'.padStart(8)}${'per s'.padStart(8)}`,
        row('concurrency 1', c1),
        row('concurrency 8', c8),
        `   steps p50 (ms): c1 ${JSON.stringify(c1.steps)}, c8 ${JSON.stringify(c8.steps)}; first rollout incl. browser start ${round(firstRollout)} ms`,
      ].join('\n')}\n`,
    );
    return figures;
  } finally {
    await engine.close();
    await sandbox.dispose();
    server.close();
  }
}

async function once(
  engine: BrowserEngine,
  config: BrowserConfig,
  policy: WebConfig,
  sandbox: Sandbox,
  url: string,
): Promise<Timing> {
  const session = new BrowserSession(engine, config, policy, sandbox);
  const started = performance.now();
  const page = await session.currentPage();
  const opened = performance.now();
  await page.goto(url, { waitUntil: 'load' });
  const report = await session.report();
  if (!report.includes('heading "Benchmark page"')) throw new Error(`unexpected snapshot: ${report.slice(0, 200)}`);
  const snapshotted = performance.now();
  await session.dispose();
  const closed = performance.now();
  return {
    total: closed - started,
    context: opened - started,
    snapshot: snapshotted - opened,
    close: closed - snapshotted,
  };
}

async function measure(iterations: number, concurrency: number, run: () => Promise<Timing>) {
  const limit = pLimit(concurrency);
  const started = performance.now();
  const settled = await Promise.allSettled(Array.from({ length: iterations }, () => limit(run)));
  const failure = settled.find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
  const results = settled.map((result) => (result as PromiseFulfilledResult<Timing>).value);
  const wall = performance.now() - started;
  const p50 = (values: number[]) => round(percentile(values, 50));
  return {
    p50: p50(results.map((timing) => timing.total)),
    p95: round(
      percentile(
        results.map((timing) => timing.total),
        95,
      ),
    ),
    perSecond: round((iterations / wall) * 1000, 1),
    steps: {
      context: p50(results.map((timing) => timing.context)),
      navigate_snapshot: p50(results.map((timing) => timing.snapshot)),
      close: p50(results.map((timing) => timing.close)),
    },
  };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

function round(value: number, digits = 0): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
