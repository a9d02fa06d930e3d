import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runAgent } from '../../src/agent/index.js';
import { resolveAuxiliary, type AuxiliaryConfig } from '../../src/config/auxiliary.js';
import { EndpointSchema, type Endpoint } from '../../src/config/endpoint.js';
import { WebConfigSchema } from '../../src/config/web.js';
import { createModelClient } from '../../src/model/client.js';
import type { Message } from '../../src/model/messages.js';
import { createLocalSandbox, createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import {
  callTool as scriptedCall,
  reply,
  startScriptedServer,
  TINY_PNG_BASE64,
  type ChatRequest,
  type ScriptedServer,
} from '../../src/testing/index.js';
import { loadToolRegistry, type ToolServices } from '../../src/tools/index.js';
import { requireDockerOrSkip, uniqueRunName } from '../helpers/docker.js';
import { startWebStandIn } from '../helpers/web-stand-in.js';
import { DEFAULT_TOOL_SETTINGS } from '../../src/config/tool-settings.js';

const PNG = Buffer.from(TINY_PNG_BASE64, 'base64');

/**
 * One scripted server plays every model: the agent (model "agent") calls a tool on its first turn
 * and answers with the tool's result on its second; auxiliary models answer by their model name.
 */
function modelsScript(firstCall: { name: string; arguments: Record<string, unknown> }) {
  return (request: ChatRequest) => {
    const model = request.model ?? '';
    if (model === 'agent') {
      const result = request.messages.find((message) => message.role === 'tool');
      return result ? reply(`Tool said: ${String(result.content)}`) : scriptedCall(firstCall.name, firstCall.arguments);
    }
    if (model === 'vision-x') {
      const content = request.messages[0]!.content as Array<{
        type: string;
        text?: string;
        image_url?: { url: string };
      }>;
      const image = content.find((part) => part.type === 'image_url')!.image_url!.url;
      return reply(`I see a ${image.slice(5, image.indexOf(';'))} image; question was: ${content[0]!.text}`, {
        usage: { prompt_tokens: 100, completion_tokens: 10 },
      });
    }
    if (model.startsWith('ref-'))
      return reply(`${model} says 42`, { usage: { prompt_tokens: 20, completion_tokens: 5 } });
    if (model === 'agg') {
      const system = String(request.messages[0]!.content);
      return reply(`combined: 42 (from ${(system.match(/says 42/g) ?? []).length} answers)`, {
        usage: { prompt_tokens: 30, completion_tokens: 7 },
      });
    }
    return reply(`unexpected model ${model}`);
  };
}

function endpoint(server: ScriptedServer, model: string): Endpoint {
  return EndpointSchema.parse({ base_url: server.url, model, api_key_env: 'NO_KEY', max_retries: 0 });
}

async function runWithTool(
  server: ScriptedServer,
  sandbox: Sandbox,
  toolsets: string[],
  auxiliary: AuxiliaryConfig,
  web = WebConfigSchema.parse({}),
) {
  const main = endpoint(server, 'agent');
  const clients = new Map<string, ReturnType<typeof createModelClient>>();
  const services: ToolServices = {
    settings: { ...DEFAULT_TOOL_SETTINGS, web },
    auxiliary: resolveAuxiliary(auxiliary, main),
    model: (target) =>
      clients.get(JSON.stringify(target)) ??
      clients.set(JSON.stringify(target), createModelClient(target)).get(JSON.stringify(target))!,
  };
  const tools = (await loadToolRegistry()).select(toolsets, { env: {}, services });
  const messages: Message[] = [
    { role: 'system', content: 'test' },
    { role: 'user', content: 'go' },
  ];
  return runAgent({ model: createModelClient(main), tools, messages, sandbox, maxTurns: 3, services, env: {} });
}

function toolResult(result: Awaited<ReturnType<typeof runWithTool>>): Record<string, unknown> {
  const message = result.messages.find((entry) => entry.role === 'tool')!;
  return JSON.parse(message.content as string) as Record<string, unknown>;
}

async function visionOfSandboxFile(sandbox: Sandbox): Promise<void> {
  const server = await startScriptedServer(
    modelsScript({ name: 'vision_analyze', arguments: { image_url: 'shots/pixel.png', question: 'what colour?' } }),
  );
  try {
    await sandbox.writeFile('shots/pixel.png', PNG);
    const result = await runWithTool(server, sandbox, ['vision'], { vision: { model: 'vision-x' } });
    assert.equal(result.finishReason, 'stop');
    assert.deepEqual(
      result.toolCalls.map((call) => [call.name, call.ok]),
      [['vision_analyze', true]],
    );
    assert.deepEqual(toolResult(result), {
      answer: 'I see a image/png image; question was: what colour?',
      model: 'vision-x',
    });
    const visionRequest = server.requests.find((request) => request.model === 'vision-x')!;
    const parts = visionRequest.messages[0]!.content as Array<{ type: string; image_url?: { url: string } }>;
    assert.equal(
      parts[1]!.image_url!.url,
      `data:image/png;base64,${TINY_PNG_BASE64}`,
      'the file bytes reached the vision model',
    );
    assert.ok(result.usage.prompt_tokens >= 100, 'the vision call is counted in the rollout usage');
  } finally {
    await server.close();
  }
}

async function imageIntoSandbox(sandbox: Sandbox): Promise<void> {
  const server = await startScriptedServer(
    modelsScript({ name: 'image_generate', arguments: { prompt: 'a grey pixel', aspect_ratio: 'portrait' } }),
  );
  try {
    const result = await runWithTool(server, sandbox, ['image_gen'], { image: { model: 'painter-1' } });
    assert.deepEqual(
      result.toolCalls.map((call) => [call.name, call.ok]),
      [['image_generate', true]],
    );
    const output = toolResult(result);
    assert.match(String(output.image), /^images\/[0-9a-f]{16}\.png$/);
    assert.equal(output.aspect_ratio, 'portrait');
    assert.deepEqual(await sandbox.readFile(String(output.image)), PNG, 'the generated image is in the sandbox');
    // Hermes' portrait is 16:9 tall: the size an OpenAI-style service takes for it.
    assert.deepEqual(
      server.imageRequests.map((request) => [request.route, request.model, request.prompt, request.size]),
      [['generations', 'painter-1', 'a grey pixel', '1024x1792']],
    );
  } finally {
    await server.close();
  }
}

/** A 1×1 GIF: a second image, told apart from the PNG by its bytes and type. */
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

describe('vision_analyze, mixture_of_agents and image_generate, called as a model would (local sandbox)', () => {
  test('vision_analyze of a sandbox path sends the file to the vision model as an image part', async () => {
    const sandbox = await createLocalSandbox();
    try {
      await visionOfSandboxFile(sandbox);
    } finally {
      await sandbox.dispose();
    }
  });

  test('vision_analyze of a URL fetches it under the network policy; a private URL is refused by default', async (t) => {
    const site = await startWebStandIn();
    t.after(() => site.close());
    const sandbox = await createLocalSandbox();
    t.after(() => sandbox.dispose());
    const server = await startScriptedServer(
      modelsScript({
        name: 'vision_analyze',
        arguments: { image_url: `${site.url}/image.png`, question: 'what is it?' },
      }),
    );
    t.after(() => server.close());
    const refused = await runWithTool(server, sandbox, ['vision'], { vision: { model: 'vision-x' } });
    assert.match(String(toolResult(refused).error), /refused by the network policy/);
    assert.equal(site.hits.get('/image.png'), undefined);
    const allowed = await runWithTool(
      server,
      sandbox,
      ['vision'],
      { vision: { model: 'vision-x' } },
      WebConfigSchema.parse({ allow_private: true }),
    );
    assert.match(String(toolResult(allowed).answer), /image\/png/);
    assert.equal(site.hits.get('/image.png'), 1);
  });

  test('vision_analyze of a file that is not an image is an error the model can read', async (t) => {
    const sandbox = await createLocalSandbox();
    t.after(() => sandbox.dispose());
    await sandbox.writeFile('notes.txt', 'hello');
    const server = await startScriptedServer(
      modelsScript({ name: 'vision_analyze', arguments: { image_url: 'notes.txt', question: 'what?' } }),
    );
    t.after(() => server.close());
    const result = await runWithTool(server, sandbox, ['vision'], {});
    assert.match(String(toolResult(result).error), /notes\.txt is not an image/);
    assert.equal(server.requests.filter((request) => request.model === 'vision-x').length, 0);
  });

  test('mixture_of_agents asks the reference models in parallel, then the aggregator; usage adds up', async (t) => {
    const server = await startScriptedServer(
      modelsScript({ name: 'mixture_of_agents', arguments: { user_prompt: 'What is 6 times 7?' } }),
    );
    t.after(() => server.close());
    const sandbox = await createLocalSandbox();
    t.after(() => sandbox.dispose());
    const result = await runWithTool(server, sandbox, ['moa'], {
      moa: { reference: [{ model: 'ref-a' }, { model: 'ref-b' }, { model: 'ref-c' }], aggregator: { model: 'agg' } },
    });
    assert.deepEqual(toolResult(result), {
      answer: 'combined: 42 (from 3 answers)',
      reference_models: ['ref-a', 'ref-b', 'ref-c'],
      aggregator: 'agg',
    });
    const order = server.requests.map((request) => request.model);
    assert.deepEqual(order.slice(1, 4).sort(), ['ref-a', 'ref-b', 'ref-c']);
    assert.equal(order[4], 'agg', 'the aggregator runs after every reference answered');
    assert.equal(server.requests[4]!.messages.at(-1)!.content, 'What is 6 times 7?');
    // Inner calls: 3 × 20 + 30 prompt tokens on top of the agent's own two calls.
    const agentPrompt = server.requests.filter((request) => request.model === 'agent').length;
    assert.equal(agentPrompt, 2);
    assert.ok(result.usage.prompt_tokens >= 90, `usage ${JSON.stringify(result.usage)}`);
    assert.ok(result.usage.completion_tokens >= 22);
  });

  test('mixture_of_agents with failing reference models reports them; all failing is an error result', async (t) => {
    const server = await startScriptedServer((request) => {
      if (request.model === 'ref-bad')
        return { fault: 'http', status: 400, body: { error: { message: 'model not found' } } };
      return modelsScript({ name: 'mixture_of_agents', arguments: { user_prompt: 'q' } })(request);
    });
    t.after(() => server.close());
    const sandbox = await createLocalSandbox();
    t.after(() => sandbox.dispose());
    const partial = await runWithTool(server, sandbox, ['moa'], {
      moa: { reference: [{ model: 'ref-a' }, { model: 'ref-bad' }], aggregator: { model: 'agg' } },
    });
    const output = toolResult(partial);
    assert.equal(output.answer, 'combined: 42 (from 1 answers)');
    assert.match(String((output.failed as string[])[0]), /^ref-bad: /);
    const none = await runWithTool(server, sandbox, ['moa'], {
      moa: { reference: [{ model: 'ref-bad' }], aggregator: { model: 'agg' } },
    });
    assert.match(String(toolResult(none).error), /every reference model failed/);
  });

  test('image_generate writes the image into the sandbox and returns its path', async () => {
    const sandbox = await createLocalSandbox();
    try {
      await imageIntoSandbox(sandbox);
    } finally {
      await sandbox.dispose();
    }
  });

  test('image_generate without aspect_ratio asks for landscape, and square is 1024x1024', async (t) => {
    const sandbox = await createLocalSandbox();
    t.after(() => sandbox.dispose());
    for (const [args, size] of [
      [{ prompt: 'wide' }, '1792x1024'],
      [{ prompt: 'even', aspect_ratio: 'square' }, '1024x1024'],
    ] as const) {
      const server = await startScriptedServer(modelsScript({ name: 'image_generate', arguments: args }));
      t.after(() => server.close());
      await runWithTool(server, sandbox, ['image_gen'], { image: { model: 'painter-1' } });
      assert.deepEqual(
        server.imageRequests.map((request) => request.size),
        [size],
      );
    }
  });

  test('image_generate with image_url edits it: the source then the references reach /images/edits as files', async (t) => {
    const sandbox = await createLocalSandbox();
    t.after(() => sandbox.dispose());
    await sandbox.writeFile('in/source.png', PNG);
    await sandbox.writeFile('in/style.gif', GIF);
    const call = {
      name: 'image_generate',
      arguments: { prompt: 'make it blue', image_url: 'in/source.png', reference_image_urls: ['in/style.gif'] },
    };
    // The edit answers with the GIF, so the file written can only have come from this answer.
    const server = await startScriptedServer(modelsScript(call), {
      images: (request) => ({ b64_json: request.route === 'edits' ? GIF.toString('base64') : TINY_PNG_BASE64 }),
    });
    t.after(() => server.close());
    const result = await runWithTool(server, sandbox, ['image_gen'], { image: { model: 'painter-1' } });
    const output = toolResult(result);
    assert.match(String(output.image), /^images\/[0-9a-f]{16}\.gif$/);
    assert.deepEqual(await sandbox.readFile(String(output.image)), GIF);
    assert.equal(server.imageRequests.length, 1);
    const [edit] = server.imageRequests;
    assert.deepEqual(
      [edit!.route, edit!.model, edit!.prompt, edit!.size],
      ['edits', 'painter-1', 'make it blue', '1792x1024'],
    );
    assert.deepEqual(
      edit!.images!.map((image) => [image.field, image.type, image.base64]),
      [
        ['image[]', 'image/png', TINY_PNG_BASE64],
        ['image[]', 'image/gif', GIF.toString('base64')],
      ],
    );
  });

  test('image_generate with one image_url sends it as `image`; references without image_url are refused unsent', async (t) => {
    const sandbox = await createLocalSandbox();
    t.after(() => sandbox.dispose());
    await sandbox.writeFile('in/source.png', PNG);
    const single = await startScriptedServer(
      modelsScript({ name: 'image_generate', arguments: { prompt: 'sharper', image_url: 'in/source.png' } }),
    );
    t.after(() => single.close());
    await runWithTool(single, sandbox, ['image_gen'], { image: { model: 'painter-1' } });
    assert.deepEqual(
      single.imageRequests.map((request) => [request.route, request.images!.map((image) => image.field)]),
      [['edits', ['image']]],
    );
    const orphan = await startScriptedServer(
      modelsScript({ name: 'image_generate', arguments: { prompt: 'x', reference_image_urls: ['in/source.png'] } }),
    );
    t.after(() => orphan.close());
    const refused = await runWithTool(orphan, sandbox, ['image_gen'], { image: { model: 'painter-1' } });
    assert.match(String(toolResult(refused).error), /reference_image_urls guide an edit of image_url/);
    assert.equal(orphan.imageRequests.length, 0);
  });

  test('availability names what is missing: moa and image_gen need auxiliary config, vision needs a model', async () => {
    const registry = await loadToolRegistry();
    const main = EndpointSchema.parse({ base_url: 'http://127.0.0.1:1/v1', model: 'agent' });
    const services = (auxiliary: ToolServices['auxiliary']): ToolServices => ({
      settings: DEFAULT_TOOL_SETTINGS,
      auxiliary,
      model: () => assert.fail('no model call'),
    });
    assert.match(
      registry.unavailableReason('moa', { env: {}, services: services(resolveAuxiliary(undefined, main)) })!,
      /mixture_of_agents: auxiliary\.moa .* is not configured/,
    );
    assert.match(
      registry.unavailableReason('image_gen', { env: {}, services: services(resolveAuxiliary(undefined, main)) })!,
      /image_generate: auxiliary\.image .* is not configured/,
    );
    assert.match(
      registry.unavailableReason('image_gen', {
        env: {},
        services: services(
          resolveAuxiliary(
            { image: { base_url: 'https://images.example.com/v1', model: 'x', api_key_env: 'IMG_KEY' } },
            main,
          ),
        ),
      })!,
      /IMG_KEY is not set/,
    );
    assert.equal(
      registry.unavailableReason('vision', { env: {}, services: services(resolveAuxiliary(undefined, main)) }),
      undefined,
      'vision falls back to the main endpoint',
    );
    assert.match(registry.unavailableReason('vision', { env: {} })!, /no vision model/);
  });
});

describe('vision_analyze and image_generate in the Docker sandbox', () => {
  test('vision_analyze reads a file inside the container; image_generate writes one there', async (t) => {
    if (!(await requireDockerOrSkip(t))) return;
    const sandbox = await createSandbox({ kind: 'docker', run: uniqueRunName('model-tools'), key: 'vision' });
    try {
      await visionOfSandboxFile(sandbox);
      await imageIntoSandbox(sandbox);
      const listed = await sandbox.exec('ls images/ && stat -c %s images/*.png');
      assert.match(listed.stdout, /^[0-9a-f]{16}\.png\n67\n$/, 'the image exists inside the container');
    } finally {
      await sandbox.dispose();
    }
  });
});
