// The benchmark's four small components, as functions that make a story's
// render function. System fonts (the preview's style), no animation, no
// timers, no network: every render paints the same pixels.
export const button = (label, background, size, pad, hpad) => () => {
  const b = document.createElement('button');
  b.textContent = label;
  b.style.cssText = `font: inherit; font-size: ${size}px; padding: ${pad}px ${hpad}px; border: 0; border-radius: 4px; color: #fff; background: ${background};`;
  return b;
};

export const card = (heading, accent, lines) => () => {
  const c = document.createElement('section');
  c.style.cssText = `width: 280px; padding: 12px; border: 2px solid ${accent}; border-radius: 6px;`;
  const h = document.createElement('h2');
  h.style.cssText = `margin: 0 0 8px; font-size: 18px; color: ${accent};`;
  h.textContent = heading;
  c.appendChild(h);
  for (let i = 1; i <= lines; i++) {
    const p = document.createElement('p');
    p.style.cssText = 'margin: 0 0 4px;';
    p.textContent = `Line ${i} of the ${heading.toLowerCase()} card.`;
    c.appendChild(p);
  }
  return c;
};

export const alert = (kind, background, border, text) => () => {
  const a = document.createElement('div');
  a.setAttribute('role', 'alert');
  a.style.cssText = `width: 420px; padding: 10px 14px; background: ${background}; border-left: 6px solid ${border};`;
  a.innerHTML = `<strong>${kind}:</strong> ${text}`;
  return a;
};

export const table = (rows, striped) => () => {
  const t = document.createElement('table');
  t.style.cssText = 'border-collapse: collapse; font-size: 14px;';
  let html = '<tr><th style="text-align: left; padding: 4px 12px; border-bottom: 2px solid #333;">Item</th><th style="text-align: right; padding: 4px 12px; border-bottom: 2px solid #333;">Count</th></tr>';
  for (let i = 1; i <= rows; i++) {
    const bg = striped && i % 2 === 0 ? '#f0f3f6' : '#ffffff';
    html += `<tr style="background: ${bg};"><td style="padding: 4px 12px;">Row ${i}</td><td style="text-align: right; padding: 4px 12px;">${i * 7}</td></tr>`;
  }
  t.innerHTML = html;
  return t;
};
