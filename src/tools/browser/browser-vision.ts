import { z } from 'zod';
import { defineTool, ToolFailure } from '../registry.js';
import { askVisionModel } from '../vision/ask-vision-model.js';
import { browserAvailable, browserSession } from './session.js';

export const BrowserVisionParameters = z.object({
  question: z
    .string()
    .min(1)
    .describe('What to find out from how the page looks (layout, charts, images, captchas, colours).'),
});

export const browserVisionTool = defineTool({
  name: 'browser_vision',
  toolset: 'browser',
  version: '1',
  description:
    'Take a screenshot of the visible part of the page and ask the vision model a question about it (layout, charts, images).',
  parameters: BrowserVisionParameters,
  available: (context) => {
    const browser = browserAvailable(context);
    if (browser !== true) return browser;
    return context.services?.auxiliary.vision
      ? true
      : 'no vision model: set auxiliary.vision (or a main endpoint) in the config';
  },
  run: ({ question }, context) => {
    const { services, signal } = context;
    const endpoint = services?.auxiliary.vision;
    if (!services || !endpoint) throw new ToolFailure('no vision model is configured (auxiliary.vision)');
    const session = browserSession(context);
    return session.exclusive(async () => {
      const page = await session.currentPage();
      const screenshot = await page.screenshot({ type: 'png' });
      // Kept beside the run store (batch, eval) so the record can point at what the model was shown.
      const kept = await services.artifacts?.save('screenshot.png', screenshot);
      const url = `data:image/png;base64,${screenshot.toString('base64')}`;
      const answer = await askVisionModel(services, endpoint, question, url, signal);
      return { answer, model: endpoint.model, url: page.url(), ...(kept ? { screenshot: kept } : {}) };
    });
  },
});
