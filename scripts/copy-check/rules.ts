/**
 * The copy check's rules (`npm run lint:copy`, issue 30): wording FINRA Funding Portal Rule 200(c)
 * forbids in a funding portal's communications, or that it may not use without a balancing
 * statement. Each rule names its reason and its source (docs/records.md lists them; why the check
 * reads the sources: docs/decisions/056). A finding is waived only line by line, with a written
 * reason (copy-check.ts).
 */
export interface CopyRule {
  id: string;
  /** What it flags; `u` and `i`, matched against one text at a time. */
  pattern: RegExp;
  reason: string;
  source: string;
}

const RULE_200C = 'FINRA Funding Portal Rule 200(c) (communications with the public)';

export const COPY_RULES: readonly CopyRule[] = [
  // Promises and guarantees: a statement that promises an outcome is "promissory".
  {
    id: 'guarantee',
    pattern: /\bguarantee(?:s|d)?\b/iu,
    reason: 'a promise: no communication may be promissory, and no investment outcome can be guaranteed',
    source: `${RULE_200C}: no false, exaggerated, unwarranted, promissory or misleading statement or claim`,
  },
  {
    id: 'risk-free',
    pattern: /\brisk[\s-]*free\b/iu,
    reason: 'denies the risk every Reg CF investment carries: misleading, and leaves out a material fact',
    source: `${RULE_200C}: no misleading statement; none may omit a material fact; fair and balanced`,
  },
  {
    id: 'no-risk',
    pattern: /\b(?:no|zero|without)\s+risks?\b/iu,
    reason: 'denies the risk every Reg CF investment carries: misleading, and leaves out a material fact',
    source: `${RULE_200C}: no misleading statement; none may omit a material fact; fair and balanced`,
  },
  {
    id: 'safe-investment',
    pattern: /\bsafe\s+investments?\b/iu,
    reason: 'an unwarranted claim about an investment that is speculative and may be lost entirely',
    source: `${RULE_200C}: no exaggerated, unwarranted or misleading claim`,
  },
  // Predictions of performance.
  {
    id: 'will-return',
    pattern: /\bwill\s+(?:return|earn|pay\s+out|grow|double|appreciate|outperform)\b/iu,
    reason: 'predicts performance',
    source: `${RULE_200C}: no communication may predict or project performance`,
  },
  {
    id: 'expected-returns',
    pattern: /\b(?:expected|projected|targeted?|estimated|anticipated)\s+(?:annual\s+)?(?:returns?|gains?|profits?)\b|\b(?:returns?|gains?|profits?)\s+of\s+(?:up\s+to\s+)?\d+(?:\.\d+)?\s*%/iu,
    reason: 'projects performance (an expected or stated rate of return)',
    source: `${RULE_200C}: no communication may predict or project performance`,
  },
  // Claims a funding portal may not make about Reg CF securities.
  {
    id: 'liquid',
    pattern: /\bliquid(?:ity)?\b/iu,
    reason: 'Reg CF securities cannot be resold for a year and have no ready market: a liquidity claim is misleading ("illiquid" is not flagged)',
    source: `17 CFR 227.501 (one-year restriction on transfer); ${RULE_200C}: no misleading claim`,
  },
  {
    id: 'tradeable',
    pattern: /\btrad(?:e)?able\b/iu,
    reason: 'Reg CF securities cannot be transferred for a year, and a funding portal runs no trading: misleading',
    source: `17 CFR 227.501 (one-year restriction on transfer); 17 CFR 227.402 (what a funding portal may do); ${RULE_200C}`,
  },
  {
    id: 'secondary-market',
    pattern: /\bsecondary[\s-]+markets?\b/iu,
    reason: 'implies a resale market a funding portal cannot offer for securities restricted from transfer',
    source: `17 CFR 227.501 (one-year restriction on transfer); ${RULE_200C}: no misleading claim`,
  },
  {
    id: 'yield',
    pattern: /\byields?\b/iu,
    reason: 'states or implies an income return: a projection of performance',
    source: `${RULE_200C}: no communication may predict or project performance`,
  },
];
