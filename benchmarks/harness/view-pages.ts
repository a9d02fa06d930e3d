import { loadavg } from 'node:os';
import { join } from 'node:path';
import { startViewer } from '../../src/view/index.js';
import { scratchDirectory } from './processes.js';
import { writeSyntheticRun } from './synthetic-run.js';

/**
 * `traj view` on a large store: the wall time of each page over HTTP (first load, then the best of
 * two more), with the store built by direct inserts. Target: every page under 1 s at 100,000 rows.
 */
export async function viewPagesBenchmark(rows: number): Promise<Record<string, unknown>> {
  const scratch = scratchDirectory('traj-bench-view-');
  try {
    const path = join(scratch.path, 'checkpoints', 'view.sqlite');
    const built = performance.now();
    writeSyntheticRun(path, rows, { name: 'view' });
    const buildMs = performance.now() - built;
    const viewer = await startViewer({
      stores: [path, path],
      checkpointsDir: join(scratch.path, 'checkpoints'),
      sessionsPath: join(scratch.path, 'no-sessions.sqlite'),
      host: '127.0.0.1',
      port: 0,
    });
    const pages: Record<string, string> = {
      runs: '',
      table: 'runs/view',
      'table-page-1000': 'runs/view?page=1000',
      'sort-reward-desc': 'runs/view?sort=reward&order=desc',
      'filter-status-finish': 'runs/view?status=done&finish=max_turns',
      'filter-toolset-reward': 'runs/view?toolset=terminal&min=0.5&max=0.9',
      'filter-error-class': 'runs/view?error=infra',
      'search-common': 'runs/view?q=files+are+in+place',
      'search-rare': 'runs/view?q=lighthouse',
      trajectory: `runs/view/item?key=item-${String(Math.floor(rows / 2)).padStart(6, '0')}&sample=0`,
      plots: 'runs/view/plots',
      compare: 'compare?a=view&b=view-2',
    };
    const figures: Record<string, unknown> = { rows, store_build_ms: Math.round(buildMs) };
    let worst = 0;
    try {
      for (const [name, path] of Object.entries(pages)) {
        const times: number[] = [];
        const cpu: number[] = [];
        for (let round = 0; round < 3; round++) {
          const started = performance.now();
          const cpuBefore = process.cpuUsage();
          const response = await fetch(`${viewer.url}${path}`);
          const body = await response.text();
          const used = process.cpuUsage(cpuBefore);
          times.push(performance.now() - started);
          cpu.push((used.user + used.system) / 1000);
          if (response.status !== 200) throw new Error(`${path}: HTTP ${response.status}: ${body.slice(0, 300)}`);
        }
        worst = Math.max(worst, times[0]!);
        // Wall time is what a user waits; CPU time (server and client share this process) shows
        // the cost apart from other load on the machine.
        figures[`${name}_ms`] =
          `first ${Math.round(times[0]!)} wall / ${Math.round(cpu[0]!)} cpu, warm ${Math.round(Math.min(...times.slice(1)))} wall / ${Math.round(Math.min(...cpu.slice(1)))} cpu`;
      }
    } finally {
      await viewer.close();
    }
    figures.slowest_first_load_ms = Math.round(worst);
    figures.load_average = loadavg()[0]!.toFixed(1);
    figures.target = 'every page < 1000 ms';
    figures.met = worst < 1000;
    return figures;
  } finally {
    scratch.remove();
  }
}
