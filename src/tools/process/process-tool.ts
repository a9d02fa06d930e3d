import { z } from 'zod';
import { defineTool } from '../tool.js';
import { ToolFailure } from '../tool-failure.js';
import { shortenMiddle } from '../terminal.js';
import { type BackgroundProcess, POLL_MAX_BYTES, ProcessTable } from './process-table.js';

const LOG_DEFAULT_LINES = 200;
const LOG_MAX_LINES = 2_000;
const WAIT_DEFAULT_SECONDS = 180;
const WAIT_MAX_SECONDS = 600;

export const ProcessParameters = z.object({
  action: z
    .enum(['list', 'poll', 'log', 'wait', 'kill', 'write', 'submit', 'close'])
    .describe('Action to perform on background processes'),
  session_id: z
    .string()
    .optional()
    .describe("Process session ID (from terminal background output). Required for all actions except 'list'."),
  data: z.string().optional().describe("Text to send to process stdin (for 'write' and 'submit' actions)"),
  timeout: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Max seconds to block for 'wait' action. Returns partial output on timeout."),
  offset: z.number().int().optional().describe("Line offset for 'log' action (default: last 200 lines)"),
  limit: z.number().int().min(1).optional().describe("Max lines to return for 'log' action"),
});
type ProcessArguments = z.infer<typeof ProcessParameters>;

async function pollOrWait(
  table: ProcessTable,
  process: BackgroundProcess,
  args: ProcessArguments,
  signal: AbortSignal,
) {
  const note: string[] = [];
  if (args.action === 'wait') {
    const seconds = Math.min(args.timeout ?? WAIT_DEFAULT_SECONDS, WAIT_MAX_SECONDS);
    if ((args.timeout ?? 0) > WAIT_MAX_SECONDS) note.push(`timeout capped at ${WAIT_MAX_SECONDS} s`);
    await table.wait(process, seconds, signal);
  }
  const status = await table.status(process);
  const fresh = await table.output(process, process.polled, POLL_MAX_BYTES);
  process.polled += Buffer.byteLength(fresh);
  const more = status.output_bytes - process.polled;
  return {
    ...status,
    new_output: fresh,
    ...(more > 0 ? { more_output_bytes: more } : {}),
    ...(note.length > 0 ? { note: note.join('; ') } : {}),
  };
}

async function log(table: ProcessTable, process: BackgroundProcess, args: ProcessArguments) {
  const limit = Math.min(args.limit ?? LOG_DEFAULT_LINES, LOG_MAX_LINES);
  const total = await table.lineCount(process);
  // Hermes' default is the last `limit` lines; a negative offset counts from the end.
  const offset =
    args.offset === undefined
      ? Math.max(0, total - limit)
      : args.offset < 0
        ? Math.max(0, total + args.offset)
        : args.offset;
  const { text } = await table.lines(process, offset, limit);
  const shown = text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  const next = offset + shown;
  return {
    session_id: process.id,
    output: shortenMiddle(text),
    offset,
    lines: total,
    ...(next < total ? { next_offset: next } : {}),
  };
}

async function send(table: ProcessTable, process: BackgroundProcess, args: ProcessArguments) {
  if (args.data === undefined) throw new ToolFailure(`${args.action} needs data`, 'pass the text to send in data');
  const data = args.action === 'submit' ? `${args.data}\n` : args.data;
  await table.write(process, data);
  return { session_id: process.id, written_bytes: Buffer.byteLength(data) };
}

export const processTool = defineTool({
  name: 'process',
  toolset: 'terminal',
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    "Manage background processes started with terminal(background=true). Actions: 'list' (show all), 'poll' (check status + new output), 'log' (full output with pagination), 'wait' (block until done or timeout), 'kill' (terminate), 'write' (send raw stdin data without newline), 'submit' (send data + Enter, for answering prompts), 'close' (close stdin/send EOF).",
  parameters: ProcessParameters,
  run: async (args, { sandbox, state, signal }) => {
    const table = ProcessTable.of(state, sandbox);
    if (args.action === 'list')
      return { processes: await Promise.all(table.all().map((process) => table.status(process))) };
    if (!args.session_id) throw new ToolFailure(`session_id is required for ${args.action}`, 'list shows them');
    const process = table.get(args.session_id);
    switch (args.action) {
      case 'poll':
      case 'wait':
        return pollOrWait(table, process, args, signal);
      case 'log':
        return log(table, process, args);
      case 'kill':
        await table.kill(process);
        return table.status(process);
      case 'write':
      case 'submit':
        return send(table, process, args);
      case 'close':
        await table.closeInput(process);
        return { session_id: process.id, stdin: 'closed' };
    }
  },
});
