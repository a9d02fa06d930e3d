import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { environmentTask, findItems, type KeyedEnvironmentItem } from '../run/environment-entries.js';
import type { RolloutServices } from '../run/rollout.js';
import { writeFileAtomically } from '../util/atomic-write.js';
import { failedRollouts, headline, transcripts, validationLines, validationMarkdown } from './bench-output.js';
import type { LoadedSuite } from './bench-suite.js';
import type { FinishedEval } from './finish-eval.js';
import {
  checkReferenceAgent,
  recheckBroken,
  ReferenceCheckSchema,
  type BrokenItem,
  type RecheckOutcome,
} from './reference-check.js';
import { renderHtmlReport } from './report-html.js';

/** What bench adds to an eval's report: the lines to print, and how many items stayed broken (exit 3 when any). */
export interface BenchReportOutcome {
  lines: string[];
  broken: number;
}

/** report.html (and, for the reference agents, validation.json and a report.md section) beside eval's report. */
export async function benchReport(
  loaded: LoadedSuite,
  finished: FinishedEval,
  recheck: number,
  log: (line: string) => void,
): Promise<BenchReportOutcome> {
  const { report, store, outDir, agent } = finished;
  let check =
    agent === 'model' || agent === 'cli' ? undefined : checkReferenceAgent(agent, report, failedRollouts(store));
  if (check && check.broken.length > 0 && recheck > 0) {
    log(
      `[traj] re-checking ${check.broken.length} broken item${check.broken.length === 1 ? '' : 's'} alone (up to ${recheck}× each; --recheck)`,
    );
    // One streaming pass finds the broken items: the environment's items are never held.
    const keys = new Set(check.broken.map((broken) => broken.key));
    const items = await findItems(finished.environment, finished.environmentOptions, keys);
    // A thread's model client and tool registry load only here: list, compare and a clean validation never need them.
    const { createThreadServices } = await import('../run/worker-services.js');
    const services = createThreadServices();
    try {
      check = await recheckBroken(check, recheck, (item) =>
        runAgain(finished, items.get(item.key), item, services, log),
      );
    } finally {
      await services.close();
    }
  }
  const html = join(outDir, 'report.html');
  writeFileAtomically(
    html,
    renderHtmlReport({ report, records: transcripts(store), agent, suite: loaded.name, check }),
  );
  const lines = [headline(loaded.suite, report), `html report: ${html}`];
  if (!check) return { lines, broken: 0 };
  writeFileAtomically(
    join(outDir, 'validation.json'),
    `${JSON.stringify(ReferenceCheckSchema.parse(check), null, 2)}\n`,
  );
  appendFileSync(finished.files.markdown, validationMarkdown(check));
  lines.push(...validationLines(check));
  return { lines, broken: check.broken.length };
}

/** One broken item run again outside the pool, nothing else running beside it; the result is not stored. */
async function runAgain(
  finished: FinishedEval,
  keyed: KeyedEnvironmentItem | undefined,
  broken: BrokenItem,
  services: RolloutServices,
  log: (line: string) => void,
): Promise<RecheckOutcome> {
  if (!keyed) return { reward: null, reason: 'the environment no longer yields this item' };
  const stored = finished.store.getItem(broken.key, broken.sample);
  const toolsets = stored ? (JSON.parse(stored.toolsets) as string[]) : [];
  const { executeRollout } = await import('../run/rollout.js');
  const outcome = await executeRollout(
    { ...environmentTask(keyed, toolsets), key: keyed.key, sample: broken.sample, settings: finished.settings },
    services,
    new AbortController().signal,
  );
  const reward = outcome.error ? null : (outcome.reward?.reward ?? null);
  const reason = outcome.error?.message ?? outcome.reward?.reward_error ?? `scored ${reward}`;
  log(`[traj]   ${broken.key}#${broken.sample}: ${reason}`);
  return { reward, reason };
}
