import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Where a run's CPU went, from the V8 profiles `node --cpu-prof --cpu-prof-dir DIR` writes (one per
 * thread): busy time, the part spent inside the openai package (any frame of it on the stack),
 * native I/O calls (socket and file writes/reads) and what is left: the harness's own CPU.
 *
 *   node --cpu-prof --cpu-prof-dir /tmp/prof dist/src/cli/main.js batch ...
 *   node dist/benchmarks/harness/cpu-profile-split.js /tmp/prof 1000   # 1000 = model calls
 *
 * The sampling profiler inflates absolute figures; compare runs profiled the same way.
 */
interface Profile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

const NATIVE_IO = new Set(['writev', 'writeUtf8String', 'writeBuffer', 'read', 'close', 'open', 'fsync', 'futimes']);

export function splitProfiles(directory: string): {
  busyMs: number;
  sdkMs: number;
  ioMs: number;
  gcMs: number;
  harnessMs: number;
} {
  let busy = 0;
  let sdk = 0;
  let io = 0;
  let gc = 0;
  for (const file of readdirSync(directory).filter((name) => name.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(join(directory, file), 'utf8')) as Profile;
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const parent = new Map<number, number>();
    for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
    profile.samples.forEach((id, index) => {
      const micros = profile.timeDeltas[index] ?? 0;
      const frame = byId.get(id)!.callFrame;
      if (frame.functionName === '(idle)') return;
      busy += micros;
      if (frame.functionName === '(garbage collector)') gc += micros;
      if (frame.url === '' && NATIVE_IO.has(frame.functionName)) io += micros;
      for (let current: number | undefined = id; current !== undefined; current = parent.get(current)) {
        if (byId.get(current)!.callFrame.url.includes('node_modules/openai/')) {
          sdk += micros;
          break;
        }
      }
    });
  }
  const ms = (micros: number) => Math.round(micros / 1000);
  return { busyMs: ms(busy), sdkMs: ms(sdk), ioMs: ms(io), gcMs: ms(gc), harnessMs: ms(busy - sdk - io) };
}

if (process.argv[1]?.endsWith('cpu-profile-split.js')) {
  const [directory, calls] = process.argv.slice(2);
  if (!directory) {
    process.stderr.write('usage: node dist/benchmarks/harness/cpu-profile-split.js PROFILE_DIR [MODEL_CALLS]\n');
    process.exitCode = 2;
  } else {
    const split = splitProfiles(directory);
    const perCall = calls
      ? { harness_ms_per_model_call: Math.round((split.harnessMs / Number(calls)) * 100) / 100 }
      : {};
    process.stdout.write(`${JSON.stringify({ ...split, ...perCall })}\n`);
  }
}
