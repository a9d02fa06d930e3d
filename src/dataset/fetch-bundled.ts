import { existsSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ConfigError, DatasetError } from '../errors.js';
import { downloadHubFile } from './hub.js';
import { readParquetRows } from './parquet.js';

/** The public GSM8K dataset on the Hub and the test shard ../shared/datasets/gsm8k was cut from. */
export const GSM8K_SOURCE = 'hf://datasets/openai/gsm8k/main/test-00000-of-00001.parquet';
/** How many test problems the dev file holds: the first 300, in source order. */
export const GSM8K_DEV_SIZE = 300;

export interface FetchOptions {
  /** The data root: the folder laid out as ../shared (datasets/…, benchmarks/…). */
  root: string;
  hubUrl?: string;
  /** Replace files that exist already. */
  force?: boolean;
}

/** One GSM8K line as ../shared holds it (see its SOURCE.md). */
export interface Gsm8kItem {
  id: string;
  question: string;
  answer: string;
  final: string;
}

/** `final`: the text after `####`, without whitespace or thousands separators. */
export function gsm8kItem(index: number, question: string, answer: string): Gsm8kItem {
  const marker = answer.lastIndexOf('####');
  if (marker < 0)
    throw new DatasetError(`GSM8K test row ${index}: the answer has no '####' line`, { code: 'dataset_row_invalid' });
  const final = answer
    .slice(marker + 4)
    .trim()
    .replaceAll(',', '');
  return { id: `gsm8k-test-${String(index).padStart(4, '0')}`, question, answer, final };
}

/** Fetch openai/gsm8k's test split and write its first 300 problems to ROOT/datasets/gsm8k/test-dev.jsonl. */
export async function fetchGsm8k(options: FetchOptions): Promise<{ file: string; items: number }> {
  const file = join(options.root, 'datasets', 'gsm8k', 'test-dev.jsonl');
  refuseExisting(file, options.force);
  const parquet = await downloadHubFile(GSM8K_SOURCE, options.hubUrl ? { hubUrl: options.hubUrl } : {});
  const lines: string[] = [];
  for await (const raw of readParquetRows(parquet)) {
    const row = ('value' in raw ? raw.value : {}) as { question?: unknown; answer?: unknown };
    if (typeof row.question !== 'string' || typeof row.answer !== 'string')
      throw new DatasetError(`${GSM8K_SOURCE}: row ${lines.length} lacks question/answer strings`, {
        code: 'dataset_row_invalid',
      });
    lines.push(JSON.stringify(gsm8kItem(lines.length, row.question, row.answer)));
    if (lines.length === GSM8K_DEV_SIZE) break;
  }
  if (lines.length < GSM8K_DEV_SIZE)
    throw new DatasetError(`${GSM8K_SOURCE}: ${lines.length} rows, expected at least ${GSM8K_DEV_SIZE}`, {
      code: 'dataset_row_invalid',
    });
  await writeAtomically(file, `${lines.join('\n')}\n`);
  return { file, items: lines.length };
}

/** Download every file of a Hub dataset repository of terminal tasks into ROOT/benchmarks/terminal-tasks. */
export async function fetchTerminalTasks(
  repository: string,
  options: FetchOptions & { revision?: string },
): Promise<{ folder: string; files: number }> {
  const folder = join(options.root, 'benchmarks', 'terminal-tasks');
  refuseExisting(folder, options.force);
  const hub = await import('@huggingface/hub');
  const repo = { type: 'dataset' as const, name: repository };
  const access = {
    ...(options.hubUrl ? { hubUrl: options.hubUrl } : {}),
    ...(process.env.HF_TOKEN ? { accessToken: process.env.HF_TOKEN } : {}),
  };
  const revision = options.revision ?? 'main';
  const staging = `${folder}.partial`;
  let files = 0;
  for await (const entry of hub.listFiles({ repo, revision, recursive: true, ...access })) {
    if (entry.type !== 'file' || entry.path === '.gitattributes') continue;
    const blob = await hub.downloadFile({ repo, path: entry.path, revision, ...access });
    if (!blob)
      throw new DatasetError(`${repository}: ${entry.path} is listed but not found`, { code: 'dataset_hub_not_found' });
    const target = join(staging, entry.path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, Buffer.from(await blob.arrayBuffer()), {
      mode: entry.path.endsWith('.sh') ? 0o755 : 0o644,
    });
    files += 1;
  }
  if (files === 0)
    throw new DatasetError(`${repository}@${revision}: the repository holds no files`, {
      code: 'dataset_hub_not_found',
    });
  await rename(staging, folder);
  return { folder, files };
}

function refuseExisting(path: string, force: boolean | undefined): void {
  if (existsSync(path) && !force)
    throw new ConfigError(`${path} exists already: pass --force to replace it`, { code: 'cli_usage' });
}

async function writeAtomically(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(`${file}.partial`, text);
  await rename(`${file}.partial`, file);
}
