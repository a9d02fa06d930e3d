import { z } from 'zod';
import { defineTool } from '../registry.js';
import { browserAvailable, browserSession } from './session.js';

export const BrowserTypeParameters = z.object({
  ref: z.string().min(1).describe('The text field, as the latest snapshot names it, e.g. "e7".'),
  text: z.string().describe('The text to put in the field (replaces what it holds).'),
  submit: z.boolean().default(false).describe('true: press Enter afterwards (submits most forms).'),
});

export const browserTypeTool = defineTool({
  name: 'browser_type',
  toolset: 'browser',
  version: '1',
  description: 'Type text into a field by its ref, optionally pressing Enter to submit; returns the page afterwards.',
  parameters: BrowserTypeParameters,
  available: browserAvailable,
  run: ({ ref, text, submit }, context) => {
    const session = browserSession(context);
    return session.exclusive(async () => {
      const field = await session.locate(ref);
      await field.fill(text);
      if (submit) await field.press('Enter');
      await session.settle(await session.currentPage());
      return session.report();
    });
  },
});
