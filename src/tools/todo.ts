import { z } from 'zod';
import { defineTool, type ToolContext } from './tool.js';
import { ToolFailure } from './tool-failure.js';

export const TODO_STATUSES = ['pending', 'in_progress', 'completed', 'cancelled'] as const;
/** Key of the list in ToolContext.state: it lives in the agent run, never in the prompt. */
export const TODO_STATE_KEY = 'todo';

export const TodoItemSchema = z.object({
  id: z.string().describe('Unique item identifier'),
  content: z.string().describe('Task description'),
  status: z.enum(TODO_STATUSES).describe('Current status'),
});
export type TodoItem = z.infer<typeof TodoItemSchema>;

export const TodoParameters = z.object({
  todos: z.array(TodoItemSchema).optional().describe('Task items to write. Omit to read current list.'),
  merge: z
    .boolean()
    .default(false)
    .describe('true: update existing items by id, add new ones. false (default): replace the entire list.'),
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

function assertItems(items: readonly TodoItem[]): void {
  const seen = new Set<string>();
  for (const { id, content } of items) {
    if (id.trim() === '') throw new ToolFailure('a todo item has an empty id', 'give each item an id such as "1"');
    if (content.trim() === '') throw new ToolFailure(`todo '${id}' has no content`, 'say what the item is');
    if (seen.has(id)) throw new ToolFailure(`todo id '${id}' appears twice in one call`, 'give each item its own id');
    seen.add(id);
  }
}

function merged(current: readonly TodoItem[], items: readonly TodoItem[]): TodoItem[] {
  const next = current.map((todo) => ({ ...todo }));
  for (const item of items) {
    const existing = next.find((todo) => todo.id === item.id);
    if (existing) Object.assign(existing, item);
    else next.push({ ...item });
  }
  return next;
}

export const todoTool = defineTool({
  name: 'todo',
  toolset: 'todo',
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    "Manage your task list for the current session. Use for complex tasks with 3+ steps or when the user provides multiple tasks. Call with no parameters to read the current list.\n\nWriting:\n- Provide 'todos' array to create/update items\n- merge=false (default): replace the entire list with a fresh plan\n- merge=true: update existing items by id, add any new ones\n\nEach item: {id: string, content: string, status: pending|in_progress|completed|cancelled}\nList order is priority. Only ONE item in_progress at a time.\nMark items completed immediately when done. If something fails, cancel it and add a revised item.\n\nAlways returns the full current list.",
  parameters: TodoParameters,
  run: ({ todos, merge }, { state }) => {
    if (todos === undefined) return summary(readTodos(state));
    assertItems(todos);
    const next = merge ? merged(readTodos(state), todos) : todos.map((item) => ({ ...item }));
    state.set(TODO_STATE_KEY, next);
    return summary(next);
  },
});
