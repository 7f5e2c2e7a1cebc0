import { h } from 'preact';
import htm from 'htm';

/**
 * Tagged templates that build preact elements. Every interpolated value lands as a text node or an
 * attribute value, never as markup: halt reasons, agent names, subjects and audit details arrive
 * from other people and are shown as text. Nothing here uses innerHTML.
 */
export const html = htm.bind(h);
