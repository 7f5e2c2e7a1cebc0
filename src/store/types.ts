/*
 * The port's value types live with the decisions that use them, in core/lifecycle/types.ts; this
 * module keeps the store's import path for them.
 */
export * from '../core/lifecycle/types.js';
