import { terminalTool as persistentTerminal } from '../tools/terminal.js';
import { defineTool, isZodTool, type Tool } from '../tools/tool.js';
import { ToolFailure } from '../tools/tool-failure.js';
import type { CommandApprover } from './approval.js';

/**
 * The terminal tool behind the approver: same name, description and schema (the model sees no
 * difference), but a dangerous command runs only once the user allows it. A denial is a tool
 * result the model reads, and the command never starts.
 */
export function guardTerminal(approver: CommandApprover, terminalTool: Tool = persistentTerminal): Tool {
  if (!isZodTool(terminalTool)) throw new Error('the terminal tool is expected to have zod parameters');
  const run = terminalTool.run;
  return defineTool({
    name: terminalTool.name,
    toolset: terminalTool.toolset,
    description: terminalTool.description,
    version: terminalTool.version,
    parameters: terminalTool.parameters,
    run: async (args, context) => {
      const verdict = await approver.check(String(args.command), context.signal);
      if (!verdict.allowed) {
        const reasons = verdict.patterns.map((pattern) => pattern.description).join('; ');
        throw new ToolFailure(
          `the user denied this command (${reasons}); it was not run`,
          'do not retry it as is: choose a narrower, non-destructive command, or ask the user how to proceed',
        );
      }
      return run(args, context);
    },
  });
}
