// traj mock-server --script examples/web/agent.mjs (docs/web.md): an agent that searches the web,
// reads the pages its prompt names (the site's article, its PDF and a missing page), looks at an
// image, asks a mixture-of-agents panel and runs a command, then answers. It also plays the
// auxiliary models, told apart by the model name of the request: vision-x, ref-a/ref-b and agg.
const PIXEL =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNoAAAAggCBd81ytgAAAABJRU5ErkJggg==';
const calls = (...list) => ({ tool_calls: list.map(([name, args]) => ({ name, arguments: args })) });

export default function script(request, { turn }) {
  const model = request.model ?? '';
  if (model === 'vision-x') return { content: 'a single grey pixel' };
  if (model.startsWith('ref-')) return { content: `${model}: the tide rises about 16 m` };
  if (model === 'agg') return { content: 'The tide rises about 16 m.' };
  const prompt = String(request.messages.find((message) => message.role === 'user')?.content ?? '');
  const site = /http:\/\/[^\s/]+/.exec(prompt)?.[0] ?? 'http://127.0.0.1';
  if (turn === 0)
    return calls(
      ['web_search', { query: 'fundy tides' }],
      ['web_extract', { urls: [`${site}/article`, `${site}/report.pdf`, `${site}/nothing`] }],
    );
  if (turn === 1)
    return calls(
      ['vision_analyze', { image_url: `data:image/png;base64,${PIXEL}`, question: 'What is shown?' }],
      ['mixture_of_agents', { user_prompt: 'How high is the tide in the Bay of Fundy?' }],
    );
  if (turn === 2) return calls(['terminal', { command: 'echo noted' }]);
  return { content: 'The tide in the Bay of Fundy rises about 16 m.' };
}
