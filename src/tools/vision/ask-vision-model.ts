import type { Endpoint } from '../../config/endpoint.js';
import type { Message } from '../../model/messages.js';
import { ToolFailure } from '../tool-failure.js';
import type { ToolServices } from '../services.js';

/**
 * One question about one image, put to the vision model as an OpenAI `image_url` part; its usage
 * counts in the rollout's. vision_analyze and browser_vision both ask through here.
 */
export async function askVisionModel(
  services: ToolServices,
  endpoint: Endpoint,
  question: string,
  imageUrl: string,
  signal: AbortSignal,
): Promise<string> {
  const message: Message = {
    role: 'user',
    content: [
      { type: 'text', text: question },
      { type: 'image_url', image_url: { url: imageUrl } },
    ],
  };
  const response = await services.model(endpoint).complete({ messages: [message], signal });
  services.reportUsage?.(response.usage);
  const answer = response.message.content?.trim();
  if (!answer)
    throw new ToolFailure(`the vision model (${endpoint.model}) gave an empty answer`, 'ask a more specific question');
  return answer;
}
