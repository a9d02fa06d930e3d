import { createEchoScript, DEFAULT_SCRIPTED_MODEL, loadScriptFile, startScriptedServer } from '../testing/index.js';
import { integerOption, stringOption, type CommandDefinition } from './command.js';
import { untilStopped } from './signals.js';

export const command: CommandDefinition = {
  name: 'mock-server',
  summary: 'run the scripted OpenAI-compatible endpoint (tests, demos, benchmarks)',
  usage: 'traj mock-server [--port N] [--script FILE] [--latency-ms N]',
  options: {
    port: { type: 'string', value: 'N', description: 'port to listen on (0: any free port)', default: '8787' },
    host: { type: 'string', value: 'HOST', description: 'address to listen on', default: '127.0.0.1' },
    script: {
      type: 'string',
      value: 'FILE',
      description:
        'responses: a JSON/YAML list (or {cycle: true, responses: [...]}), or a .js/.mjs module exporting a script function; default: the echo script',
    },
    'latency-ms': { type: 'string', value: 'N', description: 'wait this long before each answer', default: '0' },
    'tool-turns': {
      type: 'string',
      value: 'N',
      description: 'echo script only: terminal calls before the final answer',
      default: '1',
    },
  },
  details: [
    'The first line printed is the base URL; the server then runs until SIGINT or SIGTERM.',
    'The echo script answers any prompt: it calls `terminal` with `echo ...` when that tool is',
    'offered, then answers with text quoting the output (or answers at once without tools).',
    '',
    'examples:',
    '  traj mock-server --port 8787',
    '  OPENAI_BASE_URL=http://127.0.0.1:8787/v1 TRAJ_MODEL=traj-scripted traj ask "list the files"',
    '  traj mock-server --port 0 --script my-script.yaml --latency-ms 200',
  ].join('\n'),
  async run({ values }) {
    const port = integerOption(values, 'port', { min: 0 }) ?? 8787;
    const latencyMs = integerOption(values, 'latency-ms', { min: 0 }) ?? 0;
    const toolTurns = integerOption(values, 'tool-turns', { min: 0 }) ?? 1;
    const scriptFile = stringOption(values, 'script');
    const script = scriptFile ? await loadScriptFile(scriptFile) : createEchoScript({ toolTurns });
    const server = await startScriptedServer(script, {
      port,
      host: stringOption(values, 'host') ?? '127.0.0.1',
      latencyMs,
      record: false,
    });
    process.stdout.write(`${server.url}\n`);
    process.stdout.write(
      `serving model '${DEFAULT_SCRIPTED_MODEL}' with ${scriptFile ? `the script ${scriptFile}` : 'the echo script'}` +
        `${latencyMs ? `, ${latencyMs} ms latency` : ''}; stop with Ctrl-C\n` +
        `  export OPENAI_BASE_URL=${server.url} TRAJ_MODEL=${DEFAULT_SCRIPTED_MODEL}\n`,
    );
    const signal = await untilStopped();
    await server.close();
    process.stdout.write(`stopped by ${signal} after ${server.requestCount()} chat requests\n`);
    return 0;
  },
};
