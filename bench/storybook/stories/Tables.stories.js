// 6 tables: two, five or eight rows, plain or striped. Named exports, written out: Storybook indexes a stories file
// without running it.
import { table } from './components.js';

export default {
  title: 'Bench/Tables',
};

export const Rows2Plain = { render: table(2, false) };
export const Rows2Striped = { render: table(2, true) };
export const Rows5Plain = { render: table(5, false) };
export const Rows5Striped = { render: table(5, true) };
export const Rows8Plain = { render: table(8, false) };
export const Rows8Striped = { render: table(8, true) };
