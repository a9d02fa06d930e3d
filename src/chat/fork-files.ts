import { contentText, type Message } from '../model/messages.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { executeToolCall } from '../tools/execute-tool-call.js';
import type { Tool } from '../tools/tool.js';

/** Calls whose whole effect on the workspace is in their arguments: replaying them rebuilds their files. */
const REPLAYABLE = new Set(['write_file', 'patch']);

export interface ReplayReport {
  /** Calls replayed, in order, and the paths they wrote. */
  replayed: number;
  files: string[];
  /** Successful calls of tools whose effects on files the record does not hold (terminal, execute_code, …). */
  notReplayed: Record<string, number>;
  /** Replayable calls that failed now (the call, why). */
  failed: string[];
}

/**
 * The rollout's files, as far as its record can rebuild them: the write_file and patch calls that
 * succeeded in the rollout are run again, in order, in the chat's sandbox. What other tools did to
 * files (a terminal command, a script) is not in the record, so it is counted and said, not guessed;
 * nor is what the environment's setup put there before the rollout began.
 */
export async function replayFileCalls(
  messages: readonly Message[],
  tools: readonly Tool[],
  sandbox: Sandbox,
): Promise<ReplayReport> {
  const report: ReplayReport = { replayed: 0, files: [], notReplayed: {}, failed: [] };
  const results = new Map(
    messages.flatMap((message) =>
      message.role === 'tool' ? [[message.tool_call_id, contentText(message.content)]] : [],
    ),
  );
  const fileTools = tools.filter((tool) => REPLAYABLE.has(tool.name));
  const context = { sandbox, signal: new AbortController().signal, state: new Map(), callId: 'replay', env: {} };
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const call of message.tool_calls ?? []) {
      const result = results.get(call.id);
      if (result === undefined || succeededNot(result)) continue;
      const name = call.function.name;
      if (!REPLAYABLE.has(name)) {
        report.notReplayed[name] = (report.notReplayed[name] ?? 0) + 1;
        continue;
      }
      const outcome = await executeToolCall(
        fileTools,
        { id: call.id, name, arguments: call.function.arguments },
        { ...context, callId: call.id },
      );
      if (!outcome.ok) {
        report.failed.push(`${name} ${call.function.arguments.slice(0, 80)}: ${outcome.content.slice(0, 200)}`);
        continue;
      }
      report.replayed++;
      for (const path of pathsOf(name, call.function.arguments, outcome.content))
        if (!report.files.includes(path)) report.files.push(path);
    }
  }
  return report;
}

/** A result the model read as a failure: `{"error": …}`. */
function succeededNot(content: string): boolean {
  try {
    const parsed = JSON.parse(content) as unknown;
    return typeof parsed === 'object' && parsed !== null && 'error' in parsed;
  } catch {
    return false;
  }
}

function pathsOf(name: string, args: string, content: string): string[] {
  try {
    if (name === 'write_file') return [String((JSON.parse(args) as { path: string }).path)];
    const result = JSON.parse(content) as { files_modified?: string[]; files_created?: string[] };
    return [...(result.files_modified ?? []), ...(result.files_created ?? [])];
  } catch {
    return [];
  }
}
