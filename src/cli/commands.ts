import type { CommandDefinition } from './command.js';

/** Commands load lazily so `traj --help` never pays for dockerode, arrow or the MCP SDK. */
export const COMMANDS: Record<string, { summary: string; load: () => Promise<CommandDefinition> }> = {
  batch: {
    summary: 'turn a prompt dataset into a trajectory dataset (resumable)',
    load: async () => (await import('./batch.js')).command,
  },
  eval: {
    summary: 'run an environment: K rollouts per item, rewards, LLM judges, pass@k and a report (resumable)',
    load: async () => (await import('./eval.js')).command,
  },
  bench: {
    summary:
      'benchmark suites (terminal tasks, GSM8K, a demo): run one, validate it with the oracle/no-op agents, compare runs; HTML report',
    load: async () => (await import('./bench.js')).command,
  },
  serve: {
    summary: 'serve scored groups to an online RL trainer over HTTP and to Atropos, from a policy it names (resumable)',
    load: async () => (await import('./serve.js')).command,
  },
  chat: {
    summary: 'interactive debug chat on the agent core (streaming, approvals, sessions, /fork of stored rollouts)',
    load: async () => (await import('./chat.js')).command,
  },
  sessions: {
    summary: 'list, search, show and export chat sessions',
    load: async () => (await import('./sessions.js')).command,
  },
  export: {
    summary:
      'turn a run store into a Hugging Face dataset (Parquet/JSONL/Arrow/Atropos/Hermes + card), optionally pushed to the Hub',
    load: async () => (await import('./export.js')).command,
  },
  compress: {
    summary:
      "fit a finished run's trajectories to a token budget for SFT, as Hermes' trajectory_compressor does (resumable)",
    load: async () => (await import('./compress.js')).command,
  },
  ask: {
    summary: 'run one prompt through the agent and print the conversation',
    load: async () => (await import('./ask.js')).command,
  },
  distributions: {
    summary: 'list the toolset distributions, or show one with what it draws in practice',
    load: async () => (await import('./distributions.js')).command,
  },
  mcp: {
    summary: 'start the configured MCP servers and list their toolsets and tools',
    load: async () => (await import('./mcp.js')).command,
  },
  view: {
    summary:
      'a local, read-only web app over run stores and chat sessions: runs, filterable trajectories, plots, compare',
    load: async () => (await import('./view.js')).command,
  },
  sandbox: {
    summary: "prune traj's leaked Docker sandbox containers",
    load: async () => (await import('./sandbox.js')).command,
  },
  worker: {
    summary: 'take rollout jobs of queued runs (--queue) from Redis and run them on this machine',
    load: async () => (await import('./worker.js')).command,
  },
  data: {
    summary: 'fetch the bundled third-party data (GSM8K, terminal tasks) from the Hugging Face Hub into ../shared',
    load: async () => (await import('./data.js')).command,
  },
  init: {
    summary: 'scaffold a project folder: a run config, a dataset, an environment and a suite, each commented',
    load: async () => (await import('./init.js')).command,
  },
  'mock-server': {
    summary: 'run the scripted OpenAI-compatible endpoint (tests, demos, benchmarks)',
    load: async () => (await import('./mock-server.js')).command,
  },
};
