import { z } from 'zod';
import type { DelegateRequest } from '../nested.js';
import { defineTool, ToolFailure } from '../registry.js';

/** Children one call may run at once. */
export const MAX_PARALLEL_TASKS = 3;

const TaskSchema = z.object({
  goal: z.string().min(1).describe('What the sub-agent must achieve, stated so it can work alone.'),
  context: z
    .string()
    .optional()
    .describe('Facts, file paths and constraints the sub-agent needs; it sees nothing else of this conversation.'),
  toolsets: z
    .array(z.string().min(1))
    .optional()
    .describe('The toolsets it may use, a subset of yours (default: all of yours).'),
});

export const DelegateTaskParameters = z.object({
  goal: TaskSchema.shape.goal.optional(),
  context: TaskSchema.shape.context,
  toolsets: TaskSchema.shape.toolsets,
  tasks: z
    .array(TaskSchema)
    .min(1)
    .max(MAX_PARALLEL_TASKS)
    .optional()
    .describe(`Up to ${MAX_PARALLEL_TASKS} independent sub-goals run at the same time, instead of goal.`),
});

export const delegateTaskTool = defineTool({
  name: 'delegate_task',
  toolset: 'delegation',
  version: '1',
  description:
    'Hand a sub-goal to a sub-agent with a fresh context: it works in the same sandbox with your tools (or the toolsets you ' +
    `name) and returns only its final answer. Give goal (and context), or tasks: up to ${MAX_PARALLEL_TASKS} sub-goals run in parallel. ` +
    'A sub-agent sees nothing of this conversation but what you put in goal and context. Sub-agents of sub-agents cannot delegate.',
  parameters: DelegateTaskParameters,
  run: async ({ goal, context, toolsets, tasks }, { delegate }) => {
    if (!delegate) throw new ToolFailure('delegation is not available in this run');
    if ((goal === undefined) === (tasks === undefined))
      throw new ToolFailure(
        'give either goal or tasks',
        'one sub-goal: {"goal": ...}; several: {"tasks": [{"goal": ...}, ...]}',
      );
    if (goal !== undefined) {
      const outcome = await delegate(request({ goal, context, toolsets }));
      return { result: outcome.answer, finish_reason: outcome.record.finish_reason };
    }
    const outcomes = await Promise.allSettled(tasks!.map((task) => delegate(request(task))));
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
    };
  },
});

function request(task: z.infer<typeof TaskSchema>): DelegateRequest {
  return {
    goal: task.goal,
    ...(task.context ? { context: task.context } : {}),
    ...(task.toolsets ? { toolsets: task.toolsets } : {}),
  };
}
