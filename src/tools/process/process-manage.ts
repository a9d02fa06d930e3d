import { z } from 'zod';
import { defineTool, ToolFailure } from '../registry.js';
import { shortenMiddle } from '../terminal.js';
import { POLL_MAX_BYTES, ProcessTable } from './process-table.js';

export const ProcessManageParameters = z.object({
  action: z
    .enum(['list', 'poll', 'log', 'wait', 'kill', 'write'])
    .describe('list all; poll: state and new output; log: lines; wait: until it exits; kill; write: to its stdin'),
  id: z.string().min(1).optional().describe('the id terminal(background: true) returned (every action but list)'),
  offset: z.number().int().nonnegative().default(0).describe('log: first line, 0-based (default 0)'),
  limit: z.number().int().positive().max(2_000).default(200).describe('log: lines to show (default 200)'),
  timeout: z.number().positive().max(600).default(30).describe('wait: seconds to wait at most (default 30)'),
  input: z.string().optional().describe('write: text sent to its stdin (add \\n for a line)'),
});

export const processManageTool = defineTool({
  name: 'process_manage',
  toolset: 'terminal',
  version: '1',
  description:
    'Manage processes started with terminal(background: true): list; poll(id) — state, exit code and output since the last poll; ' +
    'log(id, offset?, limit?) — output lines; wait(id, timeout) — until it exits or the timeout passes; kill(id) — it and everything ' +
    `it started; write(id, input) — to its stdin. A poll returns at most ${POLL_MAX_BYTES} bytes of new output (the next poll continues). ` +
    'All background processes are killed when the task ends.',
  parameters: ProcessManageParameters,
  run: async (args, { sandbox, state, signal }) => {
    const table = ProcessTable.of(state, sandbox);
    if (args.action === 'list')
      return { processes: await Promise.all(table.all().map((process) => table.status(process))) };
    if (!args.id) throw new ToolFailure(`${args.action} needs an id`, 'list shows the ids');
    const process = table.get(args.id);
    switch (args.action) {
      case 'poll':
      case 'wait': {
        if (args.action === 'wait') await table.wait(process, args.timeout, signal);
        const status = await table.status(process);
        const fresh = await table.output(process, process.polled, POLL_MAX_BYTES);
        process.polled += Buffer.byteLength(fresh);
        const more = status.output_bytes - process.polled;
        return { ...status, new_output: fresh, ...(more > 0 ? { more_output_bytes: more } : {}) };
      }
      case 'log': {
        const { text, total } = await table.lines(process, args.offset, args.limit);
        const shown = text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
        const next = args.offset + shown;
        return {
          id: process.id,
          output: shortenMiddle(text),
          lines: total,
          ...(next < total ? { next_offset: next } : {}),
        };
      }
      case 'kill':
        await table.kill(process);
        return table.status(process);
      case 'write':
        if (args.input === undefined) throw new ToolFailure('write needs input');
        await table.write(process, args.input);
        return { id: process.id, written_bytes: Buffer.byteLength(args.input) };
    }
  },
});
