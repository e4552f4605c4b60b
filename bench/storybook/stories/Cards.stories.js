// 12 cards: six accents by one or three lines. Named exports, written out: Storybook indexes a stories file
// without running it.
import { card } from './components.js';

export default {
  title: 'Bench/Cards',
};

export const Blue1 = { render: card('Blue', '#1f6feb', 1) };
export const Blue3 = { render: card('Blue', '#1f6feb', 3) };
export const Grey1 = { render: card('Grey', '#6e7781', 1) };
export const Grey3 = { render: card('Grey', '#6e7781', 3) };
export const Green1 = { render: card('Green', '#1a7f37', 1) };
export const Green3 = { render: card('Green', '#1a7f37', 3) };
export const Red1 = { render: card('Red', '#cf222e', 1) };
export const Red3 = { render: card('Red', '#cf222e', 3) };
export const Amber1 = { render: card('Amber', '#9a6700', 1) };
export const Amber3 = { render: card('Amber', '#9a6700', 3) };
export const Purple1 = { render: card('Purple', '#8250df', 1) };
export const Purple3 = { render: card('Purple', '#8250df', 3) };
