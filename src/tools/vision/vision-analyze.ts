import { z } from 'zod';
import { defineTool, ToolFailure } from '../registry.js';
import { askVisionModel } from './ask-vision-model.js';
import { imageAsDataUrl } from './image-source.js';

export const VisionAnalyzeParameters = z.object({
  image: z
    .string()
    .min(1)
    .describe('The image: an http(s) URL, a data:image/...;base64 URL, or a file path in the working directory.'),
  question: z.string().min(1).describe('What to find out about the image.'),
});

export const visionAnalyzeTool = defineTool({
  name: 'vision_analyze',
  toolset: 'vision',
  version: '1',
  description: 'Look at an image (URL, data URL or a file in the working directory) and answer a question about it.',
  parameters: VisionAnalyzeParameters,
  available: ({ services }) =>
    services?.auxiliary.vision ? true : 'no vision model: set auxiliary.vision (or a main endpoint) in the config',
  run: async ({ image, question }, { sandbox, services, signal }) => {
    const endpoint = services?.auxiliary.vision;
    if (!services || !endpoint) throw new ToolFailure('no vision model is configured (auxiliary.vision)');
    const url = await imageAsDataUrl(image, { sandbox, web: services.settings.web, signal });
    const answer = await askVisionModel(services, endpoint, question, url, signal);
    return { answer, model: endpoint.model };
  },
});
