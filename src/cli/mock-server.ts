import { ConfigError } from '../errors.js';
import { createEchoScript, DEFAULT_SCRIPTED_MODEL, loadScriptFile, startScriptedServer } from '../testing/index.js';
import { integerOption, stringOption, type CommandDefinition } from './command.js';
import { untilStopped } from './signals.js';

export const command: CommandDefinition = {
  name: 'mock-server',
  summary: 'run the scripted OpenAI-compatible endpoint (tests, demos, benchmarks)',
  usage: 'traj mock-server [--port N] [--script FILE] [--latency-ms N] [--rate-limit-above N [--retry-after S]]',
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
    'rate-limit-above': {
      type: 'string',
      value: 'N',
      description: 'answer HTTP 429 at once to a request arriving while N are being answered (a rate-limited provider)',
    },
    'retry-after': {
      type: 'string',
      value: 'S',
      description: 'with --rate-limit-above: the retry-after header of the 429s (seconds or an HTTP date)',
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
    '  traj mock-server --latency-ms 50 --rate-limit-above 16    # 429 past 16 requests in flight',
  ].join('\n'),
  async run({ values }) {
    const port = integerOption(values, 'port', { min: 0 }) ?? 8787;
    const latencyMs = integerOption(values, 'latency-ms', { min: 0 }) ?? 0;
    const toolTurns = integerOption(values, 'tool-turns', { min: 0 }) ?? 1;
    const scriptFile = stringOption(values, 'script');
    const script = scriptFile ? await loadScriptFile(scriptFile) : createEchoScript({ toolTurns });
    const host = stringOption(values, 'host') ?? '127.0.0.1';
    const server = await startScriptedServer(script, {
      port,
      host,
      latencyMs,
      record: false,
      rateLimitAbove: integerOption(values, 'rate-limit-above', { min: 1 }),
      rateLimitRetryAfter: stringOption(values, 'retry-after'),
    }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE')
        throw new ConfigError(
          `traj mock-server: port ${port} on ${host} is in use; pick another with --port N (0: any free port)`,
          { code: 'port_in_use' },
        );
      throw error;
    });
    process.stdout.write(`${server.url}\n`);
    process.stdout.write(
      `serving model '${DEFAULT_SCRIPTED_MODEL}' with ${scriptFile ? `the script ${scriptFile}` : 'the echo script'}` +
        `${latencyMs ? `, ${latencyMs} ms latency` : ''}; stop with Ctrl-C\n` +
        `  export OPENAI_BASE_URL=${server.url} TRAJ_MODEL=${DEFAULT_SCRIPTED_MODEL}\n`,
    );
    const signal = await untilStopped();
    await server.close();
    const refused = server.rateLimitedCount() ? ` (and ${server.rateLimitedCount()} answered 429)` : '';
    process.stdout.write(`stopped by ${signal} after ${server.requestCount()} chat requests${refused}\n`);
    return 0;
  },
};
