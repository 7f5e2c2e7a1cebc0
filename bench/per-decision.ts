import type { PerDecision } from './bench-types.js';
import type { Counters } from './slice-counters.js';

/**
 * A contender's counters divided by the decisions it made: `operations` times
 * `decisionsPerOperation` (2 for an admission cycle, admit and settle; 1 for a peer's `consume()`).
 */
export function perDecision(counters: Readonly<Counters>, operations: number, decisionsPerOperation: number): PerDecision {
  const decisions = operations * decisionsPerOperation;
  const each = (name: string): number | null => {
    const value = counters[name];
    return value === undefined || decisions === 0 ? null : value / decisions;
  };
  return {
    serverCpuUs: each('serverCpuUs'),
    walBytes: each('walBytes'),
    statements: each('statements'),
    allStatements: each('allStatements'),
    nodeCpuUs: each('nodeCpuUs'),
  };
}
