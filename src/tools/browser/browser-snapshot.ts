import { z } from 'zod';
import { defineTool } from '../registry.js';
import { browserAvailable, browserSession } from './session.js';

export const BrowserSnapshotParameters = z.object({
  full: z
    .boolean()
    .default(false)
    .describe(
      'true: every node of the accessibility tree, containers included; false (default): interactive elements and text only.',
    ),
});

export const browserSnapshotTool = defineTool({
  name: 'browser_snapshot',
  toolset: 'browser',
  version: '1',
  description:
    'Show the current page again as an accessibility snapshot with element refs ' +
    '(after the page changed on its own, or to see all nodes with full: true).',
  parameters: BrowserSnapshotParameters,
  available: browserAvailable,
  run: ({ full }, context) => {
    const session = browserSession(context);
    return session.exclusive(() => session.report({ full }));
  },
});
