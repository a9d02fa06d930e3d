import { spawn } from 'node:child_process';
import { statfsSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSystemPrompt } from '../../src/agent/system-prompt.js';
import { loadToolRegistry } from '../../src/tools/builtin.js';
import { toolSpec } from '../../src/tools/tool-spec.js';

export interface BareMeasurement {
  calls: number;
  wall_ms: number;
  /** The client process's user + system CPU, start-up included (as traj's is counted). */
  cpu_ms: number;
  /** The same over its calls alone, from the first request to the last reply. */
  calls_cpu_ms: number;
}

/**
 * The bare client's run (bare-client.ts, its own process) against `baseUrl`: `prompts` rollouts at
 * `concurrency`, each sending what traj sends for `toolsets` (the default system prompt and those
 * tools' specs), so the request and reply bytes are alike and only the harness differs.
 */
export async function runBareClient(options: {
  baseUrl: string;
  prompts: number;
  concurrency: number;
  toolsets: string[];
  folder: string;
}): Promise<BareMeasurement> {
  const registry = await loadToolRegistry({ toolsets: options.toolsets });
  const tools = registry.select(options.toolsets, { env: {} });
  const template = join(options.folder, 'bare-client-template.json');
  writeFileSync(
    template,
    JSON.stringify({
      model: 'traj-scripted',
      system: buildSystemPrompt({ tools }),
      tools: tools.map(toolSpec),
      toolResult: JSON.stringify({ path: 'note.txt', bytes: 15 }),
    }),
  );
  const client = fileURLToPath(new URL('./bare-client.js', import.meta.url));
  const args = [client, options.baseUrl, String(options.prompts), String(options.concurrency), template];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`bare client exited ${code}`);
  return JSON.parse(output) as BareMeasurement;
}

/** The machine a figure came from: CPU model, cores, and the load just before the run. */
export function machineDescription(): {
  cpu_model: string;
  cores: number;
  load_before: number[];
  temp_folder: string;
} {
  const all = cpus();
  return {
    cpu_model: all[0]?.model.trim() ?? 'unknown',
    cores: all.length,
    load_before: loadavg().map((value) => Math.round(value * 100) / 100),
    temp_folder: temporaryFolderKind(),
  };
}

/** Filesystem magic numbers (statfs f_type) of the filesystems a temp folder is commonly on. */
const FILESYSTEMS = new Map<number, string>([
  [0xef53, 'ext2/3/4'],
  [0x01021994, 'tmpfs'],
  [0x794c7630, 'overlayfs'],
  [0x58465342, 'xfs'],
  [0x9123683e, 'btrfs'],
  [0x2fc12fc1, 'zfs'],
]);

/**
 * Where local sandbox folders go (TMPDIR) and on what: creating and deleting a folder per rollout
 * costs 0.1 ms of CPU on a tmpfs and up to ~1 ms on an ext4 without a journal (docs/performance.md),
 * so figures from two machines compare only with this beside them.
 */
function temporaryFolderKind(): string {
  const folder = tmpdir();
  try {
    const type = statfsSync(folder).type;
    return `${folder} (${FILESYSTEMS.get(type) ?? `filesystem 0x${type.toString(16)}`})`;
  } catch {
    return folder;
  }
}
