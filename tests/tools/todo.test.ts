import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { TODO_STATE_KEY, type TodoItem } from '../../src/tools/index.js';
import { callTool, errorOf, jsonOf, toolContext } from './tool-context.js';

interface TodoList {
  todos: TodoItem[];
  counts: Record<string, number>;
}

describe('todo tool (Hermes: one tool, no arguments reads)', () => {
  let sandbox: Sandbox;

  before(async () => {
    sandbox = await createLocalSandbox();
  });
  after(async () => {
    await sandbox.dispose();
  });

  it('todos replaces the list, no arguments reads it, and it lives in the run state', async () => {
    const context = toolContext(sandbox);
    const expected = [
      { id: '1', content: 'read the task', status: 'pending' },
      { id: '2', content: 'fix the bug', status: 'in_progress' },
    ];
    const written = jsonOf<TodoList>(await callTool('todo', { todos: expected }, context));
    assert.deepEqual(written.todos, expected);
    assert.deepEqual(written.counts, { pending: 1, in_progress: 1, completed: 0, cancelled: 0 });
    assert.deepEqual(jsonOf<TodoList>(await callTool('todo', {}, context)).todos, expected);
    assert.deepEqual(context.state.get(TODO_STATE_KEY), expected);
    const replaced = jsonOf<TodoList>(
      await callTool('todo', { todos: [{ id: 'a', content: 'start over', status: 'completed' }] }, context),
    );
    assert.deepEqual(replaced.todos, [{ id: 'a', content: 'start over', status: 'completed' }]);
  });

  it('merge updates items by id, appends new ones and keeps the rest', async () => {
    const context = toolContext(sandbox);
    const item = (id: string, content: string, status = 'pending') => ({ id, content, status });
    await callTool('todo', { todos: [item('1', 'one'), item('2', 'two'), item('3', 'three')] }, context);
    const merged = jsonOf<TodoList>(
      await callTool(
        'todo',
        {
          merge: true,
          todos: [item('1', 'one', 'completed'), item('3', 'three, reworded', 'cancelled'), item('4', 'four')],
        },
        context,
      ),
    );
    assert.deepEqual(merged.todos, [
      item('1', 'one', 'completed'),
      item('2', 'two'),
      item('3', 'three, reworded', 'cancelled'),
      item('4', 'four'),
    ]);
    assert.deepEqual(merged.counts, { pending: 2, in_progress: 0, completed: 1, cancelled: 1 });
  });

  it('each run has its own list', async () => {
    await callTool('todo', { todos: [{ id: '1', content: 'mine', status: 'pending' }] }, toolContext(sandbox));
    assert.deepEqual(jsonOf<TodoList>(await callTool('todo', {}, toolContext(sandbox))).todos, []);
  });

  it('refuses items without content or status, repeated ids and unknown states, leaving the list unchanged', async () => {
    const context = toolContext(sandbox);
    await callTool('todo', { todos: [{ id: '1', content: 'keep me', status: 'pending' }] }, context);
    assert.match(
      errorOf(await callTool('todo', { todos: [{ id: 'x', status: 'pending' }] }, context)).error,
      /todos\.0\.content/,
    );
    assert.match(
      errorOf(await callTool('todo', { todos: [{ id: 'x', content: 'no status' }] }, context)).error,
      /todos\.0\.status/,
    );
    const twice = [
      { id: 'd', content: 'a', status: 'pending' },
      { id: 'd', content: 'b', status: 'pending' },
    ];
    assert.match(errorOf(await callTool('todo', { todos: twice }, context)).error, /'d' appears twice/);
    assert.match(
      errorOf(await callTool('todo', { todos: [{ id: '1', content: 'a', status: 'blocked' }] }, context)).error,
      /todos\.0\.status/,
    );
    assert.deepEqual(jsonOf<TodoList>(await callTool('todo', {}, context)).todos, [
      { id: '1', content: 'keep me', status: 'pending' },
    ]);
  });
});
