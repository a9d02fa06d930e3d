import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { WebConfigSchema, type WebConfigInput } from '../../src/config/web.js';
import { createModelClient } from '../../src/model/client.js';
import { createLocalSandbox } from '../../src/sandbox/index.js';
import {
  closeBrowserEngines,
  disposeToolState,
  type ToolCallOutcome,
  type ToolContext,
  type ToolServices,
} from '../../src/tools/index.js';
import { imageAsDataUrl } from '../../src/tools/vision/image-source.js';
import { browserSuiteOptions } from '../helpers/chromium.js';
import { escapeRegExp, SECRET, startAttackSite, type InternalTarget } from '../helpers/internal-targets.js';
import { callTool, errorOf, jsonOf, toolContext } from './tool-context.js';
import { ToolSettingsSchema } from '../../src/config/tool-settings.js';

/**
 * The attack: a page the policy lets through (a public site) redirects the harness into an
 * internal service: loopback by address, by [::1], by the name localhost, the cloud metadata
 * address, this host's own interface address. Both web_extract and the browser must refuse the
 * hop with a message naming it, show nothing of the internal page, and open no connection to it.
 */
const site = await startAttackSite();
const sandbox = await createLocalSandbox();
const contexts: ToolContext[] = [];
after(async () => {
  await Promise.all(contexts.map((context) => disposeToolState(context.state)));
  await closeBrowserEngines();
  await site.close();
  await sandbox.dispose();
});

/** What a public site passes: no private address, except the test site's own origin. */
const PUBLIC_ONLY: WebConfigInput = { allow_private_origins: [site.url] };

function rollout(web: WebConfigInput = PUBLIC_ONLY): ToolContext {
  const services: ToolServices = {
    settings: ToolSettingsSchema.parse({ web, browser: { navigation_timeout_ms: 5_000, action_timeout_ms: 2_000 } }),
    auxiliary: {},
    model: (endpoint) => createModelClient(endpoint),
  };
  const context = toolContext(sandbox, { services });
  contexts.push(context);
  return context;
}

/** The pattern of "refused by the network policy: redirect from FROM to TARGET: REASON". */
function refusal(from: string, target: InternalTarget): string {
  return `refused by the network policy: redirect from ${escapeRegExp(from)} to ${escapeRegExp(target.url)}: ${target.reason.source}`;
}

/** Run `attack` and check the internal service saw no connection and its secret is nowhere in the result. */
async function unreached(target: InternalTarget, attack: () => Promise<ToolCallOutcome>): Promise<ToolCallOutcome> {
  const before = target.service?.connections;
  const outcome = await attack();
  assert.doesNotMatch(outcome.content, new RegExp(SECRET));
  assert.equal(target.service?.connections, before, `${target.name} got a connection`);
  return outcome;
}

const loopback = site.targets.find((target) => target.name === '127.0.0.1')!;

test('the setup: this host has a non-loopback address to attack (CI machines do)', (t) => {
  if (site.targets.some((target) => target.name.startsWith("this host's"))) return;
  if (process.env.CI) assert.fail('no non-loopback interface address on this machine');
  t.skip('skipped: no non-loopback interface address here, so that target is left out');
});

describe('web_extract: a public page cannot redirect it into an internal service', () => {
  test('control: the public page is read, and with web.allow_private the redirect does reach the secret', async () => {
    const page = jsonOf<{ pages: Array<{ content?: string }> }>(
      await callTool('web_extract', { urls: [`${site.url}/`] }, rollout()),
    ).pages[0]!;
    assert.match(page.content!, /Nothing to see/);
    const leaked = await callTool(
      'web_extract',
      { urls: [site.redirect(loopback.url)] },
      rollout({ allow_private: true }),
    );
    assert.match(leaked.content, new RegExp(SECRET), 'the check below would see a leak');
  });

  for (const target of site.targets) {
    test(`a redirect to ${target.name} is refused, naming the hop and why`, async () => {
      const start = site.redirect(target.url, 2);
      const outcome = await unreached(target, () => callTool('web_extract', { urls: [start] }, rollout()));
      const [page] = jsonOf<{ pages: Array<{ error?: string; content?: string }> }>(outcome).pages;
      assert.equal(page!.content, undefined);
      assert.match(page!.error!, new RegExp(`^${refusal(site.redirect(target.url, 1), target)}$`));
    });
  }
});

test('vision_analyze of a URL goes through the same fetch: each redirect is refused there too', async () => {
  const web = WebConfigSchema.parse(PUBLIC_ONLY);
  for (const target of site.targets) {
    const start = site.redirect(target.url);
    const before = target.service?.connections;
    await assert.rejects(imageAsDataUrl(start, { sandbox, web, signal: new AbortController().signal }), {
      message: new RegExp(`^could not fetch ${escapeRegExp(start)}: ${refusal(start, target)}$`),
    });
    assert.equal(target.service?.connections, before, target.name);
  }
});

describe(
  'browser tools: a public page cannot redirect Chromium into an internal service',
  browserSuiteOptions(),
  () => {
    test('control: the public page opens, and with web.allow_private the redirect does reach the secret', async () => {
      const page = await callTool('browser_navigate', { url: `${site.url}/` }, rollout());
      assert.match(page.content, /Nothing to see/);
      const leaked = await callTool(
        'browser_navigate',
        { url: site.redirect(loopback.url) },
        rollout({ allow_private: true }),
      );
      assert.match(leaked.content, new RegExp(SECRET), 'the check below would see a leak');
    });

    for (const target of site.targets) {
      test(`browser_navigate: a redirect to ${target.name} (the second hop) is refused, naming the hop and why`, async () => {
        const context = rollout();
        const start = site.redirect(target.url, 2);
        const outcome = await unreached(target, () => callTool('browser_navigate', { url: start }, context));
        const failure = errorOf(outcome);
        assert.match(failure.error, new RegExp(`^${refusal(site.redirect(target.url, 1), target)}$`));
        assert.match(failure.hint!, /web\.allow_private_origins/);
        const after = await callTool('browser_snapshot', {}, context);
        assert.doesNotMatch(after.content, new RegExp(SECRET));
      });
    }

    test('a link whose redirect goes to 127.0.0.1: the click result says it was refused', async () => {
      const context = rollout();
      const links = await callTool('browser_navigate', { url: site.linkPage(loopback.url) }, context);
      const ref = /\[ref=(e\d+)\] link "Quarterly report"/.exec(links.content)?.[1];
      assert.ok(ref, links.content);
      const clicked = await unreached(loopback, () => callTool('browser_click', { ref }, context));
      assert.match(clicked.content, new RegExp(`^Note: ${refusal(site.redirect(loopback.url), loopback)}$`, 'm'));
    });

    test('an image whose redirect goes to 127.0.0.1 is refused with a note; the page still shows', async () => {
      const outcome = await unreached(loopback, () =>
        callTool('browser_navigate', { url: site.imagePage(loopback.url) }, rollout()),
      );
      assert.match(outcome.content, /heading "Gallery"/);
      assert.match(outcome.content, new RegExp(`^Note: ${refusal(site.redirect(loopback.url), loopback)}$`, 'm'));
    });

    test("a page script's WebSocket to 127.0.0.1 never connects", async () => {
      const context = rollout();
      const before = loopback.service!.connections;
      const socketUrl = loopback.url.replace(/^http/, 'ws');
      let shown = await callTool('browser_navigate', { url: site.socketPage(socketUrl) }, context);
      for (let tries = 0; tries < 50 && !/^Title: Socket closed$/m.test(shown.content); tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        shown = await callTool('browser_snapshot', {}, context);
      }
      assert.match(shown.content, /^Title: Socket closed$/m, 'the socket attempt is over');
      assert.equal(loopback.service!.connections, before, 'the socket never reached the internal service');
    });
  },
);
