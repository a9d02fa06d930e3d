import type { Tool } from '../tool.js';
import { browserBackTool } from './browser-back.js';
import { browserClickTool } from './browser-click.js';
import { browserConsoleTool } from './browser-console.js';
import { browserCloseTool } from './browser-close.js';
import { browserGetImagesTool } from './browser-get-images.js';
import { browserNavigateTool } from './browser-navigate.js';
import { browserPressTool } from './browser-press.js';
import { browserScrollTool } from './browser-scroll.js';
import { browserSnapshotTool } from './browser-snapshot.js';
import { browserTypeTool } from './browser-type.js';
import { browserVisionTool } from './browser-vision.js';

/** Toolset `browser`, in the order offered. */
export const BROWSER_TOOLS: readonly Tool[] = [
  browserNavigateTool,
  browserSnapshotTool,
  browserClickTool,
  browserTypeTool,
  browserPressTool,
  browserScrollTool,
  browserBackTool,
  browserGetImagesTool,
  browserVisionTool,
  browserConsoleTool,
  browserCloseTool,
];

export {
  browserBackTool,
  browserClickTool,
  browserCloseTool,
  browserConsoleTool,
  browserGetImagesTool,
  browserNavigateTool,
  browserPressTool,
  browserScrollTool,
  browserSnapshotTool,
  browserTypeTool,
  browserVisionTool,
};
export {
  BrowserEngine,
  CHROMIUM_FLAGS,
  browserAvailability,
  closeBrowserEngines,
  findChromium,
  threadBrowserEngine,
} from './engine.js';
export { BROWSER_STATE_KEY, BrowserSession, DOWNLOADS_DIR, browserSession } from './session.js';
export { renderSnapshot, capSnapshot, type AriaNode, type RenderedSnapshot } from './snapshot.js';
export { pruneLeftoverBrowsers, PROFILE_PREFIX, processesUsing } from './leftovers.js';
