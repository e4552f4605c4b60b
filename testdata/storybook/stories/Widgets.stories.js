// The rig's stories. Each exercises one thing the storybook command does:
// plain stories, a story the test-runner skips (!test), one whose render
// throws, one with toolserver parameters (mask, delay), and one whose
// content comes from the build's public/label.json so a test can change it.
export default {
  title: 'Widgets',
};

const button = (label, background) => {
  const b = document.createElement('button');
  b.textContent = label;
  b.style.cssText = `font: inherit; padding: 8px 16px; border: 0; border-radius: 4px; color: #fff; background: ${background};`;
  return b;
};

export const Primary = { render: () => button('Primary', '#1f6feb') };

export const Secondary = { render: () => button('Secondary', '#6e7781') };

export const Card = {
  render: () => {
    const card = document.createElement('section');
    card.style.cssText = 'width: 240px; padding: 12px; border: 2px solid #d0d7de; border-radius: 6px;';
    card.innerHTML = '<h2 style="margin: 0 0 8px; font-size: 18px;">Card</h2><p style="margin: 0;">Three short lines of text in a box.</p>';
    return card;
  },
};

export const Hidden = {
  tags: ['!test'],
  render: () => button('Not tested', '#cf222e'),
};

export const Broken = {
  render: () => {
    throw new Error('the Broken story fails on purpose');
  },
};

// The clock changes on every render: masked. The label appears after a
// timer: the delay lets it.
export const Clock = {
  parameters: { toolserver: { mask: [{ id: 'clock' }], delay: 300 } },
  render: () => {
    const root = document.createElement('div');
    root.innerHTML = `<p>Time: <span id="clock">${new Date().toISOString()}</span></p><p id="late"></p>`;
    setTimeout(() => {
      root.querySelector('#late').textContent = 'shown after 100 ms';
    }, 100);
    return root;
  },
};

export const Skipped = {
  parameters: { toolserver: { skip: true } },
  render: () => button('Skipped by parameter', '#bf8700'),
};

// The label comes from public/label.json, fetched by a loader (the preview
// awaits loaders before it renders).
export const Fetched = {
  loaders: [async () => ({ data: await (await fetch('./label.json')).json() })],
  render: (_args, { loaded: { data } }) => button(data.label, data.color),
};
