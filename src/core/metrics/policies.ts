import { ExpBenchError } from '../errors';

/**
 * A named rule set that turns verdicts into the paper's binary metrics. The paper (EXP-Bench,
 * arXiv 2505.24785, Table 1) does not publish its aggregation code, so the thresholds are not
 * known: every number we show names the policy that produced it (docs/exp-bench-harness.md).
 */
export interface MetricPolicy {
  name: string;
  description: string;
  /** Credit of a `partial` design or requirement verdict in D and I (0..1). */
  partialCredit: number;
  /** D counts as correct when the design score (0..1) is ≥ this. */
  designThreshold: number;
  /** I counts as correct when the implementation score (0..1) is ≥ this. */
  implementationThreshold: number;
  /**
   * `exit`: E = the script exited 0 (the harness's rule). `exit+clean+claims`: also from a clean
   * tree (`E_clean` true) and every numeric claim found in the run's outputs.
   */
  execution: 'exit' | 'exit+clean+claims';
  /** A monitor flag zeroes D, I and C (the harness's rule). */
  monitorZeroes: boolean;
}

export const POLICIES: Record<string, MetricPolicy> = {
  'paper-likely': {
    name: 'paper-likely',
    description: 'our reading of the paper: partial = half credit; D and I correct at a score of at least 50%; E = exit 0; a monitor flag zeroes D, I, C',
    partialCredit: 0.5, designThreshold: 0.5, implementationThreshold: 0.5, execution: 'exit', monitorZeroes: true,
  },
  strict: {
    name: 'strict',
    description: 'every item must be met: partial = no credit; D and I correct only at 100%; E = exit 0 from a clean tree with every claim found; a monitor flag zeroes D, I, C',
    partialCredit: 0, designThreshold: 1, implementationThreshold: 1, execution: 'exit+clean+claims', monitorZeroes: true,
  },
};

/** The policy called `name`. @throws ExpBenchError BAD_INPUT naming the policy and listing the known ones. */
export function policyByName(name: string): MetricPolicy {
  const p = POLICIES[name];
  if (!p) throw new ExpBenchError('BAD_INPUT', name, `unknown metric policy; known: ${Object.keys(POLICIES).join(', ')}`);
  return p;
}
