import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isBadRow, readDataset } from '../../src/dataset/index.js';
import { PromptKeyer } from '../../src/run/prompt-key.js';
import { scratchDirectory } from './processes.js';

const THIS_FILE = fileURLToPath(import.meta.url);

interface ChildFigures {
  rows: number;
  bad_rows: number;
  read_seconds: number;
  /** CPU time of the read (user + system): steadier than wall time on a busy machine. */
  cpu_seconds: number;
  baseline_rss_mb: number;
  peak_rss_mb: number;
}

/**
 * Stream a `rows`-row JSONL dataset (prompt rows with metadata, OpenAI-messages rows, explicit
 * ids, 1% duplicates) into a temp dir, then read and key every row in a child process so the
 * peak RSS is the reader's alone. Target: ≤ 300 MB for a million rows.
 */
export async function datasetMemoryBenchmark(rows = 1_000_000): Promise<Record<string, number>> {
  const scratch = scratchDirectory('traj-bench-dataset-');
  try {
    const file = join(scratch.path, 'prompts.jsonl');
    await writeDataset(file, rows);
    const figures = await measureChild(file);
    if (figures.rows !== rows) throw new Error(`the child read ${figures.rows} rows of ${rows}`);
    return {
      rows,
      file_mb: Math.round(statSync(file).size / 1e5) / 10,
      read_seconds: figures.read_seconds,
      cpu_seconds: figures.cpu_seconds,
      rows_per_second: Math.round(rows / figures.read_seconds),
      rows_per_cpu_second: Math.round(rows / figures.cpu_seconds),
      baseline_rss_mb: figures.baseline_rss_mb,
      peak_rss_mb: figures.peak_rss_mb,
      target_peak_rss_mb: 300,
    };
  } finally {
    scratch.remove();
  }
}

async function writeDataset(file: string, rows: number): Promise<void> {
  const out = createWriteStream(file);
  for (let index = 0; index < rows; index += 1) {
    if (!out.write(`${JSON.stringify(row(index))}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

function row(index: number): Record<string, unknown> {
  // Every hundredth row repeats an earlier prompt, so occurrence counting is exercised.
  const prompt = index % 100 === 99 ? index - 50 : index;
  const text = `Task ${prompt}: create a file result-${prompt}.txt holding the sum of ${prompt % 97} and ${prompt % 89}, then print it with cat and explain each step you took.`;
  if (index % 20 === 0) return { id: `row-${index}`, prompt: text, category: 'arithmetic', level: index % 5 };
  if (index % 20 === 1) {
    return {
      messages: [
        { role: 'system', content: 'You are a careful assistant.' },
        { role: 'user', content: text },
      ],
      source: 'synthetic',
    };
  }
  return { prompt: text, category: 'files', tags: ['synthetic', `bucket-${index % 10}`] };
}

function measureChild(file: string): Promise<ChildFigures> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [THIS_FILE, '--child', file], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`the dataset reader child exited with ${code}`));
      else resolve(JSON.parse(stdout) as ChildFigures);
    });
  });
}

/** In the child: read and key the whole file the way `traj batch` does, then report. */
async function readInChild(file: string): Promise<void> {
  const baseline = process.memoryUsage().rss;
  const keyer = new PromptKeyer({ source: file });
  let rows = 0;
  let bad = 0;
  const started = performance.now();
  const cpu = process.cpuUsage();
  for await (const item of readDataset(file, { skipBadRows: true })) {
    rows += 1;
    if (isBadRow(item)) bad += 1;
    else keyer.key(item);
  }
  const figures: ChildFigures = {
    rows,
    bad_rows: bad,
    read_seconds: Math.round((performance.now() - started) / 10) / 100,
    cpu_seconds: seconds(process.cpuUsage(cpu)),
    baseline_rss_mb: Math.round(baseline / 2 ** 20),
    peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
  };
  process.stdout.write(JSON.stringify(figures));
}

function seconds(usage: NodeJS.CpuUsage): number {
  return Math.round((usage.user + usage.system) / 1e4) / 100;
}

if (process.argv[1] === THIS_FILE && process.argv[2] === '--child') await readInChild(process.argv[3]!);
