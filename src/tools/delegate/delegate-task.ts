import { z } from 'zod';
import type { DelegateRequest } from '../nested.js';
import { defineTool } from '../tool.js';
import { ToolFailure } from '../tool-failure.js';

/** Children one call may run at once. */
export const MAX_PARALLEL_TASKS = 3;

const TaskSchema = z.object({
  goal: z.string().describe('Task goal'),
  context: z.string().optional().describe('Task-specific context'),
  role: z
    .enum(['leaf', 'orchestrator'])
    .optional()
    .describe("Per-task role override. See top-level 'role' for semantics."),
});

export const DelegateTaskParameters = z.object({
  goal: z
    .string()
    .optional()
    .describe(
      'What the subagent should accomplish. Be specific and self-contained -- the subagent knows nothing about your conversation history.',
    ),
  context: z
    .string()
    .optional()
    .describe(
      'Background information the subagent needs: file paths, error messages, project structure, constraints. The more specific you are, the better the subagent performs.',
    ),
  tasks: z.array(TaskSchema).optional().describe('(rebuilt at get_definitions() time)'),
  role: z.enum(['leaf', 'orchestrator']).optional().describe('(rebuilt at get_definitions() time)'),
  background: z
    .boolean()
    .optional()
    .describe(
      'DEPRECATED / IGNORED. Top-level single and batch delegations run in the background automatically — you do not need to (and cannot) opt in or out. A single result or consolidated batch result re-enters the conversation when the work finishes; just continue working in the meantime. Setting this has no effect; the parameter remains only for backward compatibility.',
    ),
});
type DelegateArguments = z.infer<typeof DelegateTaskParameters>;

/** What traj does not do of what the call asked, said in the result instead of refusing it. */
function limits(args: DelegateArguments): string[] {
  const notes: string[] = [];
  if (args.background !== undefined)
    notes.push('background has no effect: the results are returned when the work finishes');
  return notes;
}

export const delegateTaskTool = defineTool({
  name: 'delegate_task',
  toolset: 'delegation',
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    "Spawn one or more subagents in isolated contexts. Description is rebuilt at every get_definitions() call to reflect the user's current delegation limits.",
  parameters: DelegateTaskParameters,
  run: async (args, { delegate }) => {
    const { goal, context, tasks } = args;
    if (!delegate) throw new ToolFailure('delegation is not available in this run');
    if ((goal === undefined) === (tasks === undefined))
      throw new ToolFailure(
        'give either goal or tasks',
        'one sub-goal: {"goal": ...}; several: {"tasks": [{"goal": ...}, ...]}',
      );
    if (tasks !== undefined && (tasks.length === 0 || tasks.length > MAX_PARALLEL_TASKS))
      throw new ToolFailure(`tasks holds ${tasks.length} items`, `give 1 to ${MAX_PARALLEL_TASKS} tasks`);
    const notes = limits(args);
    const extra = notes.length > 0 ? { notes } : {};
    if (goal !== undefined) {
      const outcome = await delegate(request({ goal, context, role: args.role }));
      return { result: outcome.answer, finish_reason: outcome.record.finish_reason, ...extra };
    }
    const outcomes = await Promise.allSettled(
      tasks!.map((task) => delegate(request({ ...task, role: task.role ?? args.role }))),
    );
    return {
      results: outcomes.map((outcome, index) =>
        outcome.status === 'fulfilled'
          ? {
              goal: tasks![index]!.goal,
              result: outcome.value.answer,
              finish_reason: outcome.value.record.finish_reason,
            }
          : {
              goal: tasks![index]!.goal,
              error: outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason),
            },
      ),
      ...extra,
    };
  },
});

function request(task: DelegateRequest): DelegateRequest {
  if (task.goal.trim() === '') throw new ToolFailure('a goal is empty', 'say what the sub-agent must achieve');
  return {
    goal: task.goal,
    ...(task.context ? { context: task.context } : {}),
    ...(task.role ? { role: task.role } : {}),
  };
}
