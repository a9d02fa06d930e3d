import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_CLARIFY_ANSWER } from '../../src/config/clarify.js';
import { DEFAULT_TOOL_SETTINGS, ToolSettingsSchema } from '../../src/config/tool-settings.js';
import { createLocalSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { CLARIFY_STATE_KEY, type ClarifyAsker, type ToolServices } from '../../src/tools/index.js';
import { callTool, errorOf, jsonOf, toolContext } from './tool-context.js';

const services = (settings = DEFAULT_TOOL_SETTINGS): ToolServices => ({
  settings,
  auxiliary: {},
  model: () => assert.fail('clarify calls no model'),
});

describe('clarify', () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createLocalSandbox();
  });
  after(async () => {
    await sandbox.dispose();
  });
  const question = { question: 'Which deployment target?', choices: ['staging', 'prod'] };

  it('with no person to ask, answers with clarify.answer from the settings and says the harness answered', async () => {
    const settings = ToolSettingsSchema.parse({ clarify: { answer: 'Use staging; prod is frozen.' } });
    // The environment variable of an earlier version no longer decides anything.
    const context = toolContext(sandbox, { services: services(settings), env: { TRAJ_CLARIFY_ANSWER: 'from env' } });
    assert.deepEqual(jsonOf(await callTool('clarify', question, context)), {
      ...question,
      user_response: 'Use staging; prod is frozen.',
      answered_by: 'harness',
    });
  });

  it('the default answer tells the model to assume and say so, with or without services', async () => {
    assert.match(DEFAULT_CLARIFY_ANSWER, /Make the most reasonable assumption, say which one you made/);
    for (const context of [toolContext(sandbox), toolContext(sandbox, { services: services() })]) {
      const result = jsonOf(await callTool('clarify', { question: 'Tabs or spaces?' }, context));
      assert.deepEqual(result, {
        question: 'Tabs or spaces?',
        user_response: DEFAULT_CLARIFY_ANSWER,
        answered_by: 'harness',
      });
    }
  });

  it('a person to ask (chat) is asked the question with its choices, and their answer is the result', async () => {
    const asked: unknown[] = [];
    const ask: ClarifyAsker = async (text, choices) => {
      asked.push([text, choices]);
      return 'prod';
    };
    const context = toolContext(sandbox, { services: services(), state: new Map([[CLARIFY_STATE_KEY, ask]]) });
    assert.deepEqual(jsonOf(await callTool('clarify', question, context)), { ...question, user_response: 'prod' });
    assert.deepEqual(asked, [['Which deployment target?', ['staging', 'prod']]]);
  });

  it('an empty question and a fifth choice are errors the model reads', async () => {
    assert.match(
      errorOf(await callTool('clarify', { question: ' ' }, toolContext(sandbox))).error,
      /question is empty/,
    );
    const five = { question: 'Pick', choices: ['a', 'b', 'c', 'd', 'e'] };
    assert.match(errorOf(await callTool('clarify', five, toolContext(sandbox))).error, /choices: /);
  });

  it('clarify.answer is a strict section: an empty answer or an unknown key is refused, naming it', () => {
    assert.throws(() => ToolSettingsSchema.parse({ clarify: { answer: '' } }), /answer/);
    assert.throws(() => ToolSettingsSchema.parse({ clarify: { reply: 'x' } }), /reply/);
  });
});
