// 4 alerts, one per kind. Named exports, written out: Storybook indexes a stories file
// without running it.
import { alert } from './components.js';

export default {
  title: 'Bench/Alerts',
};

export const Info = { render: alert('Info', '#ddf4ff', '#0969da', 'the build finished.') };
export const Success = { render: alert('Success', '#dafbe1', '#1a7f37', 'all snapshots match.') };
export const Warning = { render: alert('Warning', '#fff8c5', '#9a6700', 'two baselines are missing.') };
export const Failure = { render: alert('Error', '#ffebe9', '#cf222e', 'a story threw.') };
