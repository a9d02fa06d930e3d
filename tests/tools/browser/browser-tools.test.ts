import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { BrowserConfigInput } from '../../../src/config/browser.js';
import type { WebConfigInput } from '../../../src/config/web.js';
import { EndpointSchema } from '../../../src/config/endpoint.js';
import { createModelClient } from '../../../src/model/client.js';
import { reply, startScriptedServer } from '../../../src/testing/index.js';
import { createLocalSandbox, type Sandbox } from '../../../src/sandbox/index.js';
import {
  closeBrowserEngines,
  disposeToolState,
  processesUsing,
  threadBrowserEngine,
  type ToolContext,
  type ToolServices,
} from '../../../src/tools/index.js';
import { startBrowserSite, type BrowserSite } from '../../helpers/browser-site.js';
import { browserSuiteOptions } from '../../helpers/chromium.js';
import { callTool, errorOf, jsonOf, toolContext } from '../tool-context.js';
import { ToolSettingsSchema } from '../../../src/config/tool-settings.js';

let site: BrowserSite;
let sandbox: Sandbox;
const contexts: ToolContext[] = [];

function services(web: WebConfigInput = { allow_private: true }, browser: BrowserConfigInput = {}): ToolServices {
  return {
    settings: ToolSettingsSchema.parse({
      web,
      // Generous for a busy 2-core machine (other suites' browsers run beside this one); the tests of
      // the timeouts themselves set short ones.
      browser: { navigation_timeout_ms: 20_000, action_timeout_ms: 10_000, ...browser },
    }),
    auxiliary: {},
    model: (endpoint) => createModelClient(endpoint),
  };
}

/** A rollout's tool context: its own state, so its own browser context. */
function rollout(toolServices = services()): ToolContext {
  const context = toolContext(sandbox, { services: toolServices });
  contexts.push(context);
  return context;
}

async function ok(name: string, args: unknown, context: ToolContext): Promise<string> {
  const outcome = await callTool(name, args, context);
  assert.equal(outcome.ok, true, outcome.content);
  return outcome.content;
}

/** The ref the snapshot gives the line matching `pattern`, e.g. refOf(text, /link "Next/). */
function refOf(snapshot: string, pattern: RegExp): string {
  const line = snapshot.split('\n').find((candidate) => pattern.test(candidate));
  assert.ok(line, `no line matching ${pattern} in:\n${snapshot}`);
  const ref = /\[ref=((?:f\d+)?e\d+)\]/.exec(line)?.[1];
  assert.ok(ref, `no ref on: ${line}`);
  return ref;
}

before(async () => {
  site = await startBrowserSite();
  sandbox = await createLocalSandbox();
});
after(async () => {
  await Promise.all(contexts.map((context) => disposeToolState(context.state)));
  await closeBrowserEngines();
  await site.close();
  await sandbox.dispose();
});

describe('browser tools in real headless Chromium', browserSuiteOptions(), () => {
  test('browser_console returns console messages and uncaught errors, clears them on request, and evaluates expressions', async () => {
    const context = rollout();
    await ok('browser_navigate', { url: `${site.url}/noisy` }, context);
    let read = JSON.parse(await ok('browser_console', {}, context)) as Record<string, unknown>;
    for (let tries = 0; (read.js_errors as string[]).length === 0 && tries < 20; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      read = JSON.parse(await ok('browser_console', {}, context)) as Record<string, unknown>;
    }
    assert.deepEqual(read.console_messages, [
      { type: 'log', text: 'loaded 42' },
      { type: 'warning', text: 'careful' },
    ]);
    assert.deepEqual(read.js_errors, ['boom from the page']);
    const evaluated = JSON.parse(
      await ok('browser_console', { expression: 'document.getElementById("title").textContent', clear: true }, context),
    ) as Record<string, unknown>;
    assert.deepEqual([evaluated.result, evaluated.result_type], ['"Noisy page"', 'string']);
    const cleared = JSON.parse(await ok('browser_console', {}, context)) as Record<string, unknown>;
    assert.deepEqual([cleared.console_messages, cleared.js_errors], [[], []], 'clear emptied the buffers');
    const thrown = errorOf(await callTool('browser_console', { expression: 'no_such_name.x' }, context));
    assert.match(thrown.error, /the expression threw: .*no_such_name/);
  });

  test('browser_vision with annotate draws [N] labels on the screenshot the vision model gets, then removes them', async (t) => {
    const seen: string[] = [];
    const vision = await startScriptedServer((request) => {
      const parts = request.messages[0]!.content as Array<{ type: string; image_url?: { url: string } }>;
      seen.push(parts.find((part) => part.type === 'image_url')!.image_url!.url);
      return reply('a sign-in form');
    });
    t.after(() => vision.close());
    const endpoint = EndpointSchema.parse({ base_url: vision.url, model: 'vision-x', api_key_env: 'NO_KEY' });
    const context = rollout({ ...services(), auxiliary: { vision: endpoint } });
    const login = await ok('browser_navigate', { url: `${site.url}/login` }, context);
    const refs = login.match(/\[ref=e\d+\]/g)!.length;
    const plain = JSON.parse(await ok('browser_vision', { question: 'what is shown?' }, context));
    assert.equal(plain.annotated, undefined);
    const labelled = JSON.parse(await ok('browser_vision', { question: 'what is shown?', annotate: true }, context));
    assert.equal(labelled.answer, 'a sign-in form');
    // Every ref the snapshot shows gets its label (the page's other refs may be labelled too).
    assert.ok(labelled.annotated >= refs, `annotated ${labelled.annotated}, the snapshot shows ${refs} refs`);
    assert.equal(seen.length, 2);
    assert.notEqual(seen[1], seen[0], 'the labels are in the annotated screenshot');
    const left = JSON.parse(
      await ok('browser_console', { expression: 'document.querySelectorAll(".traj-ref-label").length' }, context),
    );
    assert.equal(left.result, '0', 'the labels are gone from the page afterwards');
    await ok('browser_vision', { question: 'again?' }, context);
    assert.equal(seen[2], seen[0], 'an unannotated screenshot is as before');
  });

  test('a login form: type the user and password, submit, land on the account page', async () => {
    const context = rollout();
    const login = await ok('browser_navigate', { url: `${site.url}/login` }, context);
    assert.match(login, /^URL: http:\/\/127\.0\.0\.1:\d+\/login$/m);
    assert.match(login, /^Title: Sign in$/m);
    await ok('browser_type', { ref: refOf(login, /textbox "User name"/), text: 'ada' }, context);
    const typed = await ok('browser_type', { ref: refOf(login, /textbox "Password"/), text: 'secret' }, context);
    assert.match(typed, /^URL: .*\/login$/m, 'typing alone submits nothing');
    // Hermes' browser_type has no submit: Enter in the focused field submits the form.
    const submitted = await ok('browser_press', { key: 'Enter' }, context);
    assert.match(submitted, /^URL: .*\/account$/m);
    assert.match(submitted, /heading "Welcome, ada"/);
    assert.match(submitted, /You are signed in\./);
  });

  test('a multi-page site: follow links, then go back through the history', async () => {
    const context = rollout();
    const home = await ok('browser_navigate', { url: site.url }, context);
    const first = await ok('browser_click', { ref: refOf(home, /link "First page"/) }, context);
    assert.match(first, /holds the word apple/);
    const second = await ok('browser_click', { ref: refOf(first, /link "Next: second page"/) }, context);
    assert.match(second, /^URL: .*\/page\/2$/m);
    assert.match(second, /holds the word banana/);
    const back = await ok('browser_back', {}, context);
    assert.match(back, /^URL: .*\/page\/1$/m);
    assert.match(back, /holds the word apple/);
    const backAgain = await ok('browser_back', {}, context);
    assert.match(backAgain, /^Title: Home$/m);
  });

  test('content that only JavaScript creates is in the snapshot, and clicking it runs the script', async () => {
    const context = rollout();
    const page = await ok('browser_navigate', { url: `${site.url}/script` }, context);
    // The HTML holds only a script; the button appears 30 ms after load. If it is not there yet, a snapshot shows it.
    const shown = /Made by JavaScript/.test(page) ? page : await ok('browser_snapshot', {}, context);
    const clicked = await ok('browser_click', { ref: refOf(shown, /button "Made by JavaScript"/) }, context);
    assert.match(clicked, /Clicked 1 times/);
  });

  test('a page that never finishes loading returns what is there, with a note, within the timeout', async () => {
    // Long enough for the page's text to arrive on a busy machine; its image never does.
    const context = rollout(services({ allow_private: true }, { navigation_timeout_ms: 4_000 }));
    const page = await ok('browser_navigate', { url: `${site.url}/slow` }, context);
    assert.match(page, /Note: the page did not finish loading within 4000 ms/);
    assert.match(page, /heading "Partial page"/);
    assert.match(page, /This text is here before the image arrives/);
  });

  test('a ref from before a navigation is stale: a readable error that says to take a new snapshot', async () => {
    const context = rollout();
    const first = await ok('browser_navigate', { url: `${site.url}/page/1` }, context);
    const oldRef = refOf(first, /link "Next: second page"/);
    const second = await ok('browser_navigate', { url: `${site.url}/page/2` }, context);
    assert.doesNotMatch(second, new RegExp(`\\[ref=${oldRef}\\]`), 'refs differ between documents');
    const failure = errorOf(await callTool('browser_click', { ref: oldRef }, context));
    assert.match(failure.error, new RegExp(`ref ${oldRef} is stale`));
    assert.match(failure.hint!, /browser_snapshot/);
    const nonsense = errorOf(await callTool('browser_click', { ref: 'button.submit' }, context));
    assert.match(nonsense.error, /not an element ref/);
  });

  test('every action returns the new snapshot; refs of one page stay the same across snapshots', async () => {
    const context = rollout();
    const before = await ok('browser_navigate', { url: `${site.url}/login` }, context);
    const after = await ok('browser_type', { ref: refOf(before, /textbox "User name"/), text: 'grace' }, context);
    assert.equal(refOf(after, /button "Sign in"/), refOf(before, /button "Sign in"/));
    assert.match(after, /textbox "User name".*: grace/);
    const full = await ok('browser_snapshot', { full: true }, context);
    assert.match(full, /^Snapshot \(full\):$/m);
    assert.ok(full.length > after.length, 'the full snapshot shows the containers too');
  });

  test('rollouts are isolated: a cookie one sets is not seen by another', async () => {
    const [a, b] = [rollout(), rollout()];
    await ok('browser_navigate', { url: `${site.url}/set-cookie?value=alpha` }, a);
    assert.match(await ok('browser_navigate', { url: `${site.url}/show-cookie` }, a), /token is alpha/);
    assert.match(await ok('browser_navigate', { url: `${site.url}/show-cookie` }, b), /token is absent/);
  });

  test('the network policy: loopback refused by default; a refused subresource never reaches its server', async () => {
    const denied = errorOf(await callTool('browser_navigate', { url: `${site.url}/` }, rollout(services({}))));
    assert.match(denied.error, /refused by the network policy: http:\/\/127\.0\.0\.1:\d+\/: .*loopback/);
    assert.match(denied.hint!, /web\.allow_private/);
    const file = errorOf(await callTool('browser_navigate', { url: 'file:///etc/passwd' }, rollout()));
    assert.match(file.error, /scheme file: is not fetched/);

    // The page's own host is allowed; its image comes from a denied name of the same server.
    const context = rollout(services({ allow_private: true, deny_domains: ['localhost'] }));
    const before = site.hits.length;
    const page = await ok('browser_navigate', { url: `${site.url}/embed` }, context);
    assert.match(page, /heading "Embed"/);
    assert.match(
      page,
      /Note: refused by the network policy: http:\/\/localhost:\d+\/pixel\.png: localhost is in web\.deny_domains/,
    );
    assert.deepEqual(site.hits.slice(before), ['/embed'], 'the refused image never reached the server');
    const port = new URL(site.url).port;
    const direct = errorOf(await callTool('browser_navigate', { url: `http://localhost:${port}/pixel.png` }, context));
    assert.match(direct.error, /localhost is in web\.deny_domains/);
  });

  test('images are listed with absolute URLs and alt text; a key press and a scroll work', async () => {
    const context = rollout();
    await ok('browser_navigate', { url: `${site.url}/images` }, context);
    const listed = jsonOf<{ count: number; images: Array<{ src: string; alt: string }> }>(
      await callTool('browser_get_images', {}, context),
    );
    assert.equal(listed.count, 2);
    assert.deepEqual(listed.images[0], { ...listed.images[0], src: `${site.url}/pixel.png`, alt: 'a red dot' });
    assert.match(listed.images[1]!.src, /^data:image\/gif;base64,.*…$/);
    const scrolled = await ok('browser_scroll', { direction: 'down' }, context);
    assert.match(scrolled, /^Scrolled down: now at y=0 \(x=0\) of a \d+ px page, 800 px visible\.$/m);
    const badKey = errorOf(await callTool('browser_press', { key: 'NoSuchKey' }, context));
    assert.match(badKey.error, /Unknown key: "NoSuchKey"/);
  });

  test('a download lands in the rollout sandbox; a dialog is dismissed and reported', async () => {
    const context = rollout();
    const page = await ok('browser_navigate', { url: `${site.url}/download` }, context);
    // The download event can arrive after the click's result on a loaded machine; the note is then
    // in the next result, which is what a model reads either way.
    let seen = await ok('browser_click', { ref: refOf(page, /link "Get the report"/) }, context);
    for (let tries = 0; tries < 20 && !/Note: downloaded/.test(seen); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      seen = await ok('browser_snapshot', {}, context);
    }
    assert.match(seen, /Note: downloaded .*\/file\.txt to downloads\/report\.txt \(18 bytes\)/);
    assert.equal((await sandbox.readFile('downloads/report.txt')).toString(), 'quarterly numbers\n');
    const dialogPage = await ok('browser_navigate', { url: `${site.url}/dialog` }, context);
    const dismissed = await ok('browser_click', { ref: refOf(dialogPage, /button "Show alert"/) }, context);
    assert.match(dismissed, /Note: a alert dialog said "Hello from the page"; it was dismissed/);
  });

  test('browser_close discards the context; disposing the rollout state closes it; the next call starts fresh', async () => {
    const engine = threadBrowserEngine(services().settings.browser);
    const context = rollout();
    await ok('browser_navigate', { url: `${site.url}/set-cookie?value=beta` }, context);
    const open = engine.openContexts;
    assert.equal(await ok('browser_close', {}, context), 'The browser is closed; cookies and storage are gone.');
    assert.equal(engine.openContexts, open - 1);
    assert.match(await ok('browser_navigate', { url: `${site.url}/show-cookie` }, context), /token is absent/);
    await disposeToolState(context.state);
    assert.equal(engine.openContexts, open - 1);
    assert.equal(context.state.size, 0);
  });

  test('a page whose script never yields: the call fails after its deadline instead of holding the rollout', async () => {
    // The navigation has room on a busy machine; the deadline is 3 × 2,500 + 500 ms.
    const context = rollout(
      services({ allow_private: true }, { navigation_timeout_ms: 2_500, action_timeout_ms: 500 }),
    );
    const busy = await ok('browser_navigate', { url: `${site.url}/busy` }, context);
    assert.match(busy, /heading "Busy page"/);
    const spin = refOf(busy, /button "Spin forever"/);
    // The click's own action timeout ends it; the script keeps spinning.
    const clicked = errorOf(await callTool('browser_click', { ref: spin }, context));
    assert.match(clicked.error, /Timeout 500ms exceeded|did not respond within 8000 ms/);
    const stuck = errorOf(await callTool('browser_scroll', { direction: 'down' }, context));
    assert.match(stuck.error, /the page did not respond within 8000 ms/);
    assert.match(await ok('browser_close', {}, context), /closed/);
    assert.match(await ok('browser_navigate', { url: `${site.url}/page/2` }, context), /banana/);
  });

  test('a crashed browser is a readable tool error for the rollouts using it, and the next call restarts it', async () => {
    const engine = threadBrowserEngine(services().settings.browser);
    const context = rollout();
    await ok('browser_navigate', { url: `${site.url}/page/1` }, context);
    const profile = await engine.profile();
    assert.ok(profile && existsSync(profile));
    const pids = processesUsing(profile);
    assert.ok(pids.length > 0, 'the browser process names its profile folder');
    // Chromium's own temp folder (its singleton socket) is inside the profile, so it goes with it.
    assert.ok(
      readdirSync(join(profile, 'tmp')).some(
        (name) => name.startsWith('.org.chromium.') || name.startsWith('org.chromium.'),
      ),
      'chromium keeps its temp files in the profile folder',
    );
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const crashed = errorOf(await callTool('browser_snapshot', {}, context));
    assert.match(crashed.error, /the browser crashed and was restarted/);
    assert.match(crashed.hint!, /browser_navigate/);
    assert.match(await ok('browser_navigate', { url: `${site.url}/page/2` }, context), /banana/);
    const restarted = await engine.profile();
    assert.notEqual(restarted, profile);
    assert.equal(existsSync(profile), false, 'the dead browser profile is removed');
  });
});
