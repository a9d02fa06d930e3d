import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { TODO_STATE_KEY, type TodoItem } from '../../src/tools/index.js';
import { callTool, errorOf, jsonOf, toolContext } from './tool-context.js';

interface TodoList {
  todos: TodoItem[];
  counts: Record<string, number>;
}

describe('todo tools', () => {
  let sandbox: Sandbox;

  before(async () => {
    sandbox = await createLocalSandbox();
  });
  after(async () => {
    await sandbox.dispose();
  });

  it('todo_write replaces the list, todo_read returns it, and it lives in the run state', async () => {
    const context = toolContext(sandbox);
    const written = jsonOf<TodoList>(
      await callTool(
        'todo_write',
        {
          todos: [
            { id: '1', content: 'read the task' },
            { id: '2', content: 'fix the bug', status: 'in_progress' },
          ],
        },
        context,
      ),
    );
    const expected = [
      { id: '1', content: 'read the task', status: 'pending' },
      { id: '2', content: 'fix the bug', status: 'in_progress' },
    ];
    assert.deepEqual(written.todos, expected);
    assert.deepEqual(written.counts, { pending: 1, in_progress: 1, completed: 0, cancelled: 0 });
    assert.deepEqual(jsonOf<TodoList>(await callTool('todo_read', {}, context)).todos, expected);
    assert.deepEqual(context.state.get(TODO_STATE_KEY), expected);

    const replaced = jsonOf<TodoList>(
      await callTool('todo_write', { todos: [{ id: 'a', content: 'start over', status: 'completed' }] }, context),
    );
    assert.deepEqual(replaced.todos, [{ id: 'a', content: 'start over', status: 'completed' }]);
  });

  it('merge updates items by id, appends new ones and keeps the rest', async () => {
    const context = toolContext(sandbox);
    await callTool(
      'todo_write',
      {
        todos: [
          { id: '1', content: 'one' },
          { id: '2', content: 'two' },
          { id: '3', content: 'three' },
        ],
      },
      context,
    );
    const merged = jsonOf<TodoList>(
      await callTool(
        'todo_write',
        {
          merge: true,
          todos: [
            { id: '1', status: 'completed' },
            { id: '3', content: 'three, reworded', status: 'cancelled' },
            { id: '4', content: 'four' },
          ],
        },
        context,
      ),
    );
    assert.deepEqual(merged.todos, [
      { id: '1', content: 'one', status: 'completed' },
      { id: '2', content: 'two', status: 'pending' },
      { id: '3', content: 'three, reworded', status: 'cancelled' },
      { id: '4', content: 'four', status: 'pending' },
    ]);
    assert.deepEqual(merged.counts, { pending: 2, in_progress: 0, completed: 1, cancelled: 1 });
    assert.deepEqual(jsonOf<TodoList>(await callTool('todo_read', {}, context)).todos, merged.todos);
  });

  it('each run has its own list', async () => {
    await callTool('todo_write', { todos: [{ id: '1', content: 'mine' }] }, toolContext(sandbox));
    assert.deepEqual(jsonOf<TodoList>(await callTool('todo_read', {}, toolContext(sandbox))).todos, []);
  });

  it('refuses a new item without content, repeated ids and unknown states, leaving the list unchanged', async () => {
    const context = toolContext(sandbox);
    await callTool('todo_write', { todos: [{ id: '1', content: 'keep me' }] }, context);
    assert.match(
      errorOf(await callTool('todo_write', { merge: true, todos: [{ id: 'new', status: 'pending' }] }, context)).error,
      /'new' is new and has no content/,
    );
    assert.match(
      errorOf(await callTool('todo_write', { todos: [{ id: 'x' }] }, context)).error,
      /'x' is new and has no content/,
    );
    assert.match(
      errorOf(
        await callTool(
          'todo_write',
          {
            todos: [
              { id: 'd', content: 'a' },
              { id: 'd', content: 'b' },
            ],
          },
          context,
        ),
      ).error,
      /'d' appears twice/,
    );
    assert.match(
      errorOf(await callTool('todo_write', { todos: [{ id: '1', content: 'a', status: 'blocked' }] }, context)).error,
      /todos\.0\.status/,
    );
    assert.deepEqual(jsonOf<TodoList>(await callTool('todo_read', {}, context)).todos, [
      { id: '1', content: 'keep me', status: 'pending' },
    ]);
  });
});
