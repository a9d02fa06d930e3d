import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';

/**
 * The baseline of the throughput benchmarks: a bare keep-alive Node client, no harness, making the
 * same model calls at the same concurrency against the same mock server (each rollout: the request
 * with the system prompt, prompt and tool specs, then the follow-up with the tool result). It prints
 * its own CPU (user + system) and wall time as JSON, for the ratio traj's CPU per call is reported as.
 * `cpu_ms` is the whole process, start-up included, as traj's CPU is counted; `calls_cpu_ms` is
 * the calls alone.
 *
 * node bare-client.js BASE_URL PROMPTS CONCURRENCY TEMPLATE.json
 */
interface Template {
  model: string;
  system: string;
  tools: unknown[];
  /** What the tool answers, as traj's tool would (its result text). */
  toolResult: string;
}

interface Message {
  role: string;
  content: string | null;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

const [baseUrl, promptsText, concurrencyText, templateFile] = process.argv.slice(2);
const template = JSON.parse(readFileSync(templateFile!, 'utf8')) as Template;
const url = new URL(`${baseUrl!.replace(/\/$/, '')}/chat/completions`);
const agent = new Agent({ keepAlive: true, maxSockets: Number(concurrencyText) });

function post(messages: Message[]): Promise<Message> {
  const body = JSON.stringify({ model: template.model, messages, tools: template.tools });
  return new Promise((resolve, reject) => {
    const call = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          if (response.statusCode !== 200) return reject(new Error(`HTTP ${response.statusCode}`));
          const reply = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { choices: { message: Message }[] };
          resolve(reply.choices[0]!.message);
        });
      },
    );
    call.on('error', reject);
    call.end(body);
  });
}

async function rollout(index: number): Promise<number> {
  const messages: Message[] = [
    { role: 'system', content: template.system },
    { role: 'user', content: `benchmark prompt ${index}` },
  ];
  let calls = 0;
  for (;;) {
    const reply = await post(messages);
    calls++;
    if (!reply.tool_calls?.length) return calls;
    messages.push(reply);
    for (const call of reply.tool_calls)
      messages.push({ role: 'tool', tool_call_id: call.id, content: template.toolResult });
  }
}

async function main(): Promise<void> {
  const prompts = Number(promptsText);
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  let next = 0;
  let calls = 0;
  const slot = async () => {
    while (next < prompts) {
      // Read after the await: `calls += await …` would add to the value from before it.
      const made = await rollout(next++);
      calls += made;
    }
  };
  await Promise.all(Array.from({ length: Math.min(prompts, Number(concurrencyText)) }, slot));
  const callsCpu = process.cpuUsage(cpuBefore);
  agent.destroy();
  const whole = process.cpuUsage();
  const report = {
    calls,
    wall_ms: performance.now() - started,
    cpu_ms: (whole.user + whole.system) / 1000,
    calls_cpu_ms: (callsCpu.user + callsCpu.system) / 1000,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

await main();
