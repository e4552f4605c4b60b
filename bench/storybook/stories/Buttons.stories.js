// 18 buttons: six colours by three sizes. Named exports, written out: Storybook indexes a stories file
// without running it.
import { button } from './components.js';

export default {
  title: 'Bench/Buttons',
};

export const BlueSmall = { render: button('Blue small', '#1f6feb', 12, 4, 10) };
export const BlueMedium = { render: button('Blue medium', '#1f6feb', 16, 8, 16) };
export const BlueLarge = { render: button('Blue large', '#1f6feb', 20, 12, 24) };
export const GreySmall = { render: button('Grey small', '#6e7781', 12, 4, 10) };
export const GreyMedium = { render: button('Grey medium', '#6e7781', 16, 8, 16) };
export const GreyLarge = { render: button('Grey large', '#6e7781', 20, 12, 24) };
export const GreenSmall = { render: button('Green small', '#1a7f37', 12, 4, 10) };
export const GreenMedium = { render: button('Green medium', '#1a7f37', 16, 8, 16) };
export const GreenLarge = { render: button('Green large', '#1a7f37', 20, 12, 24) };
export const RedSmall = { render: button('Red small', '#cf222e', 12, 4, 10) };
export const RedMedium = { render: button('Red medium', '#cf222e', 16, 8, 16) };
export const RedLarge = { render: button('Red large', '#cf222e', 20, 12, 24) };
export const AmberSmall = { render: button('Amber small', '#9a6700', 12, 4, 10) };
export const AmberMedium = { render: button('Amber medium', '#9a6700', 16, 8, 16) };
export const AmberLarge = { render: button('Amber large', '#9a6700', 20, 12, 24) };
export const PurpleSmall = { render: button('Purple small', '#8250df', 12, 4, 10) };
export const PurpleMedium = { render: button('Purple medium', '#8250df', 16, 8, 16) };
export const PurpleLarge = { render: button('Purple large', '#8250df', 20, 12, 24) };
