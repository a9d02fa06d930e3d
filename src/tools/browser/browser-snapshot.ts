import { z } from 'zod';
import { defineTool } from '../tool.js';
import { browserAvailable, browserSession } from './session.js';

export const BrowserSnapshotParameters = z.object({
  full: z
    .boolean()
    .default(false)
    .describe(
      'If true, returns complete page content. If false (default), returns compact view with interactive elements only.',
    ),
});

export const browserSnapshotTool = defineTool({
  name: 'browser_snapshot',
  toolset: 'browser',
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    "Get a text-based snapshot of the current page's accessibility tree. Returns interactive elements with ref IDs (like @e1, @e2) for browser_click and browser_type. full=false (default): compact view with interactive elements. full=true: complete page content. Snapshots over 15000 chars are truncated or LLM-summarized; when that happens the complete snapshot is saved to a file and the output includes its path so you can page through the rest with read_file. Requires browser_navigate first. Note: browser_navigate already returns a compact snapshot — use this to refresh after interactions that change the page, or with full=true for complete content.",
  parameters: BrowserSnapshotParameters,
  available: browserAvailable,
  run: ({ full }, context) => {
    const session = browserSession(context);
    return session.exclusive(() => session.report({ full }));
  },
});
