// The test-runner's visual-testing recipe: after each story has rendered,
// a screenshot of the page compared with its jest-image-snapshot
// baseline (written on the first run, or with -u). One file per story id
// under $SNAPSHOTS_DIR (run.sh gives each run a temp directory), else
// __image_snapshots__ in the directory the runner starts in.
import path from 'node:path';
import { toMatchImageSnapshot } from 'jest-image-snapshot';

const customSnapshotsDir = process.env.SNAPSHOTS_DIR || path.join(process.cwd(), '__image_snapshots__');

export default {
  setup() {
    expect.extend({ toMatchImageSnapshot });
  },
  async postVisit(page, context) {
    const image = await page.screenshot();
    expect(image).toMatchImageSnapshot({ customSnapshotsDir, customSnapshotIdentifier: context.id });
  },
};
