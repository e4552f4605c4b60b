// Deterministic pixels: fonts every Debian image has, no animations, no
// transitions, a fixed page colour.
const style = document.createElement('style');
style.textContent = `
  html, body { margin: 0; background: #ffffff; }
  body { font-family: "DejaVu Sans", "Liberation Sans", sans-serif; font-size: 16px; }
  *, *::before, *::after { animation: none !important; transition: none !important; caret-color: transparent; }
`;
document.head.appendChild(style);

export default {
  parameters: { layout: 'padded' },
};
