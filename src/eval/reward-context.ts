import type { Sandbox } from '../sandbox/sandbox.js';
import type { RewardContext } from './environment.js';

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A RewardContext over the rollout's own sandbox (the same one the agent used). */
export function createRewardContext(sandbox: Sandbox, signal: AbortSignal): RewardContext {
  return {
    sandbox,
    signal,
    exec: (command, options) => sandbox.exec(command, { signal, ...options }),
    readFile: (path) => sandbox.readFile(path),
    writeFile: (path, data) => sandbox.writeFile(path, data),
    upload: (localPath, remotePath) => sandbox.upload(localPath, remotePath),
    download: (remotePath, localPath) => sandbox.download(remotePath, localPath),
    async listFiles(path = '.') {
      const result = await sandbox.exec(`cd ${shellQuote(path)} && find . -type f -not -path './.traj/*' | sed 's#^\\./##' | sort`, { signal });
      if (result.exitCode !== 0) throw new Error(`listFiles(${path}) failed: ${result.stderr.trim() || `exit ${result.exitCode}`}`);
      return result.stdout.split('\n').filter(Boolean);
    },
  };
}
