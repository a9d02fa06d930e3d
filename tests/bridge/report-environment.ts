import { defineEnvironment } from '../../src/eval/index.js';

/**
 * One file task for third-party agents: report.txt must start with 100. The reward also searches
 * the container for the endpoint's key (BRIDGE_SECRET, given on stdin so no command line holds it):
 * in the environments the agent's processes had (dumped while they ran) and in files.
 */
export default defineEnvironment<{ id: string; instruction: string }>({
  name: 'bridge-report',
  version: '1',
  async *items() {
    yield {
      id: 'sum-report',
      instruction: 'Create a file report.txt in the current directory whose first line is 100.',
    };
  },
  prompt: (item) => item.instruction,
  async reward(_item, _result, context) {
    const report = await context.exec('head -n1 report.txt');
    const search = await context.exec(
      '(env; cat /proc/[0-9]*/environ) 2>/dev/null | tr "\\0" "\\n" >> /tmp/env-dump.txt; ' +
        'grep -rlF -f /dev/stdin /tmp /app /root /etc /opt/traj-agent /home /var 2>/dev/null; true',
      { stdin: process.env.BRIDGE_SECRET ?? 'unset' },
    );
    const dump = await context.exec('wc -l < /tmp/env-dump.txt');
    return {
      score: report.stdout.trim() === '100' ? 1 : 0,
      details: { report: report.stdout.trim(), keyFoundIn: search.stdout.trim(), environLines: Number(dump.stdout) },
    };
  },
});
