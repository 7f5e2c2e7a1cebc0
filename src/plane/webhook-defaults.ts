/*
 * The dispatcher's defaults, apart from the dispatcher itself so that `serve --help` and the
 * settings read them without loading the HTTP sender and the signing library.
 */

/** How often a dispatcher asks whether anything is new, in ms (docs/design/rules.md#h6). */
export const DEFAULT_WEBHOOK_POLL_MS = 250;
