import { ConfigError } from '../errors.js';
import { defaultSessionsPath, isLoopback, startViewer } from '../view/index.js';
import { integerOption, stringOption, type CommandDefinition } from './command.js';
import { untilStopped } from './signals.js';

export const DEFAULT_VIEW_PORT = 7373;

export const command: CommandDefinition = {
  name: 'view',
  summary:
    'a local, read-only web app over run stores and chat sessions: runs, filterable trajectories, plots, compare',
  usage: 'traj view [RUN|STORE.sqlite ...] [--port N] [--host 127.0.0.1] [--checkpoints DIR] [--sessions FILE]',
  allowPositionals: true,
  options: {
    port: {
      type: 'string',
      value: 'N',
      description: 'port to listen on (0: any free port)',
      default: String(DEFAULT_VIEW_PORT),
    },
    host: {
      type: 'string',
      value: 'HOST',
      description:
        'address to listen on; anything but loopback prints a warning: trajectories may hold secrets a tool printed',
      default: '127.0.0.1',
    },
    checkpoints: {
      type: 'string',
      value: 'DIR',
      description: 'folder of run stores (run names and the default list come from here)',
      default: 'checkpoints',
    },
    sessions: {
      type: 'string',
      value: 'FILE',
      description: 'chat sessions store (default $TRAJ_HOME/sessions.sqlite)',
    },
  },
  details: [
    'Without arguments every store in the checkpoints folder is listed (newest first); name runs',
    'or .sqlite files to show only those. Nothing is written: stores are opened read-only, the',
    'server answers GET and HEAD only, pages run no script and load nothing from the network.',
    'The server runs until SIGINT or SIGTERM.',
    '',
    'examples:',
    '  traj view                                   # every run in checkpoints/, and chat sessions',
    '  traj view demo other/run.sqlite --port 0    # two stores, any free port',
  ].join('\n'),
  async run({ values, positionals }) {
    const host = stringOption(values, 'host') ?? '127.0.0.1';
    const port = integerOption(values, 'port', { min: 0 }) ?? DEFAULT_VIEW_PORT;
    if (port > 65_535) throw new ConfigError(`flag --port: expected 0..65535, got ${port}`, { code: 'cli_usage' });
    if (!isLoopback(host)) {
      process.stderr.write(
        `traj view: WARNING: listening on ${host}, not loopback: anyone who can reach this address can read every trajectory served,\n` +
          '  including secrets a tool may have printed. Use the default --host 127.0.0.1 unless you mean it.\n',
      );
    }
    const sessions = stringOption(values, 'sessions') ?? defaultSessionsPath();
    // Listen for the stop signals before anyone can learn the URL and send one.
    const stopped = untilStopped();
    const viewer = await startViewer({
      stores: positionals,
      checkpointsDir: stringOption(values, 'checkpoints') ?? 'checkpoints',
      sessionsPath: sessions,
      host,
      port,
    }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE')
        throw new ConfigError(
          `traj view: port ${port} on ${host} is in use; pick another with --port N (0: any free port)`,
          { code: 'port_in_use' },
        );
      throw error;
    });
    process.stdout.write(`traj view: ${viewer.url}\n`);
    const { runs, sessions: sessionCount } = viewer.contents();
    const listed = runs.length > 6 ? `${runs.slice(0, 6).join(', ')}, …` : runs.join(', ');
    process.stdout.write(
      `serving ${runs.length} run${runs.length === 1 ? '' : 's'}${runs.length > 0 ? ` (${listed})` : ''}${positionals.length > 0 ? '' : ` from ${stringOption(values, 'checkpoints') ?? 'checkpoints'}/`}` +
        ` and ${sessionCount} chat session${sessionCount === 1 ? '' : 's'} from ${sessions}; read-only, stop with Ctrl-C\n`,
    );
    const signal = await stopped;
    await viewer.close();
    process.stdout.write(`stopped by ${signal}\n`);
    return 0;
  },
};
