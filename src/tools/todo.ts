import { z } from 'zod';
import { defineTool, ToolFailure, type ToolContext } from './registry.js';

export const TODO_STATUSES = ['pending', 'in_progress', 'completed', 'cancelled'] as const;
/** Key of the list in ToolContext.state: it lives in the agent run, never in the prompt. */
export const TODO_STATE_KEY = 'todo';

export const TodoItemSchema = z.object({
  id: z.string().min(1).describe('Stable identifier of the item, e.g. "1" or "tests"; used to update it later.'),
  content: z.string().min(1).describe('What to do, in one short sentence.'),
  status: z.enum(TODO_STATUSES).describe('pending, in_progress, completed or cancelled.'),
});
export type TodoItem = z.infer<typeof TodoItemSchema>;

const TodoUpdateSchema = z.object({
  id: TodoItemSchema.shape.id,
  content: TodoItemSchema.shape.content.optional(),
  status: TodoItemSchema.shape.status.optional(),
});
type TodoUpdate = z.infer<typeof TodoUpdateSchema>;

export const TodoWriteParameters = z.object({
  todos: z
    .array(TodoUpdateSchema)
    .describe(
      'Items to write. Without merge: the whole new list (content required; status defaults to pending). With merge: only the items to add or change.',
    ),
  merge: z
    .boolean()
    .default(false)
    .describe('true: update items by id and append new ones, keeping the rest; false: replace the whole list.'),
});

export function readTodos(state: ToolContext['state']): TodoItem[] {
  const list = state.get(TODO_STATE_KEY);
  return Array.isArray(list) ? (list as TodoItem[]) : [];
}

function summary(todos: TodoItem[]): { todos: TodoItem[]; counts: Record<(typeof TODO_STATUSES)[number], number> } {
  const counts = Object.fromEntries(
    TODO_STATUSES.map((status) => [status, todos.filter((todo) => todo.status === status).length]),
  );
  return { todos, counts: counts as Record<(typeof TODO_STATUSES)[number], number> };
}

function newItem(update: TodoUpdate): TodoItem {
  if (update.content === undefined) {
    throw new ToolFailure(
      `todo '${update.id}' is new and has no content`,
      'give content for new items (merge updates only need id and the changed fields)',
    );
  }
  return { id: update.id, content: update.content, status: update.status ?? 'pending' };
}

function assertUniqueIds(updates: TodoUpdate[]): void {
  const seen = new Set<string>();
  for (const { id } of updates) {
    if (seen.has(id)) throw new ToolFailure(`todo id '${id}' appears twice in one call`, 'give each item its own id');
    seen.add(id);
  }
}

function merged(current: TodoItem[], updates: TodoUpdate[]): TodoItem[] {
  const next = current.map((todo) => ({ ...todo }));
  for (const update of updates) {
    const existing = next.find((todo) => todo.id === update.id);
    if (!existing) next.push(newItem(update));
    else
      Object.assign(
        existing,
        update.content === undefined ? {} : { content: update.content },
        update.status === undefined ? {} : { status: update.status },
      );
  }
  return next;
}

export const todoWriteTool = defineTool({
  name: 'todo_write',
  toolset: 'todo',
  version: '1',
  description:
    'Keep a task list for this conversation: plan multi-step work, mark one item in_progress at a time, completed when done. ' +
    'Returns the full list.',
  parameters: TodoWriteParameters,
  run: ({ todos, merge }, { state }) => {
    assertUniqueIds(todos);
    const next = merge ? merged(readTodos(state), todos) : todos.map(newItem);
    state.set(TODO_STATE_KEY, next);
    return summary(next);
  },
});

export const todoReadTool = defineTool({
  name: 'todo_read',
  toolset: 'todo',
  version: '1',
  description: 'Show the current task list of this conversation.',
  parameters: z.object({}),
  run: (_args, { state }) => summary(readTodos(state)),
});
