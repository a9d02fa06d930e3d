import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { BrowserConfigSchema } from '../../../src/config/browser.js';
import {
  browserAvailability,
  capSnapshot,
  findChromium,
  PROFILE_PREFIX,
  pruneLeftoverBrowsers,
  renderSnapshot,
  type AriaNode,
} from '../../../src/tools/index.js';

/** Gone, or a zombie nobody reaped yet (PID 1 of a container may not reap). */
function ended(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z');
  } catch {
    return true;
  }
}

const TREE: AriaNode[] = [
  {
    role: 'generic',
    ref: 'e1',
    children: [
      { role: 'heading', name: 'Sign in', level: 1, ref: 'e2' },
      {
        role: 'generic',
        ref: 'e3',
        children: [
          'User',
          { role: 'textbox', name: 'User', ref: 'e4', text: 'ada' },
          { role: 'checkbox', name: 'Remember me', checked: true, ref: 'e5' },
        ],
      },
      { role: 'button', name: 'Submit', ref: 'e6', disabled: true },
      { role: 'link', name: 'Help', ref: 'e7', url: '/help', cursor: 'pointer' },
      { role: 'list', ref: 'e8', children: [{ role: 'listitem', ref: 'e9', text: 'one' }] },
    ],
  },
];

describe('snapshot rendering', () => {
  test('compact: containers without a name disappear, their children move up; refs, flags, values and URLs are shown', () => {
    const { text, refs } = renderSnapshot(TREE);
    assert.equal(
      text,
      [
        '[ref=e2] heading "Sign in" [level=1]',
        'text: User',
        '[ref=e4] textbox "User": ada',
        '[ref=e5] checkbox "Remember me" [checked]',
        '[ref=e6] button "Submit" [disabled]',
        '[ref=e7] link "Help" -> /help',
        '[ref=e9] listitem: one',
      ].join('\n'),
    );
    assert.deepEqual(
      [...refs].sort(),
      ['e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8', 'e9'],
      'hidden containers keep valid refs',
    );
  });

  test('full: every node, indented by depth', () => {
    const { text } = renderSnapshot(TREE, true);
    assert.match(
      text,
      /^\[ref=e1\] generic\n {2}\[ref=e2\] heading "Sign in" \[level=1\]\n {2}\[ref=e3\] generic\n {4}text: User\n {4}\[ref=e4\] textbox "User": ada/,
    );
    assert.match(text, /^ {2}\[ref=e8\] list\n {4}\[ref=e9\] listitem: one$/m);
  });

  test('a long snapshot is cut at a line boundary with a note saying how much is hidden', () => {
    const long = Array.from({ length: 100 }, (_, index) => `[ref=e${index}] link "Item ${index}"`).join('\n');
    const { text, cut } = capSnapshot(long, 200);
    assert.equal(cut, true);
    const lines = text.split('\n');
    assert.match(lines.at(-1)!, /^\[snapshot cut: \d+ more lines not shown \(browser\.snapshot_max_chars = 200\)\]$/);
    assert.equal(lines.length - 1 + Number(/cut: (\d+)/.exec(text)![1]), 100, 'shown + hidden = all lines');
    assert.deepEqual(capSnapshot('short', 200), { text: 'short', cut: false });
  });
});

describe('engine discovery and leftovers', () => {
  test('chromium is found on PATH; a missing executable or PATH is a reason, a CDP URL needs none', () => {
    const config = BrowserConfigSchema.parse({});
    assert.equal(findChromium('/nonexistent-folder'), undefined);
    if (findChromium()) assert.equal(browserAvailability(config), true);
    assert.match(
      String(browserAvailability({ ...config, executable: '/nonexistent/chromium' })),
      /browser\.executable \/nonexistent\/chromium is not an executable file/,
    );
    assert.equal(browserAvailability({ ...config, cdp_url: 'http://127.0.0.1:9222' }), true);
    assert.throws(() => BrowserConfigSchema.parse({ executabel: 'x' }), /unrecognized_keys[\s\S]*executabel/);
  });

  test('profiles of dead owners are removed with their processes; live owners and other folders are kept', async () => {
    const root = mkdtempSync(join(tmpdir(), 'traj-prune-test-'));
    try {
      const dead = spawnSync(process.execPath, ['-e', 'process.pid']).pid!; // ended: its pid is free
      const deadFolder = join(root, `${PROFILE_PREFIX}${dead}-abc`);
      const liveFolder = join(root, `${PROFILE_PREFIX}${process.ppid}-def`);
      const other = join(root, 'playwright_chromiumdev_profile-xyz');
      for (const folder of [deadFolder, liveFolder, other]) mkdirSync(join(folder, 'profile'), { recursive: true });
      // A stand-in for an orphaned browser: a process whose command line names the dead owner's folder.
      const orphan = spawnSync('sh', ['-c', `sleep 30 ${deadFolder} >/dev/null 2>&1 & echo $!`], { encoding: 'utf8' });
      const orphanPid = Number(orphan.stdout.trim());
      const removed = await pruneLeftoverBrowsers(root);
      assert.deepEqual(removed, [deadFolder]);
      assert.equal(existsSync(deadFolder), false);
      assert.equal(existsSync(liveFolder), true);
      assert.equal(existsSync(other), true);
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.ok(ended(orphanPid), 'the orphan was killed');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
