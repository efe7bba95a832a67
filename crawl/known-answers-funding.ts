/**
 * Funding a known-answer run's own wallet (`io/runs/wallet.ts`) from the configured payer, once per run: the signed
 * transfer is journaled before it is sent, and a resume sends that same transaction again.
 */
import type { Budget } from '../core/budget.ts';
import { canonicalUsdc } from '../core/networks.ts';
import type { RunJournal } from '../io/runs/journal.ts';
import { FUNDING_NETWORK, type RunWallets, type SignedFunding } from '../io/runs/wallet.ts';

/** What funding needs: the wallets, the run's journal, and what the journal said so far (updated here). */
export type FundingRun = {
  wallets: RunWallets;
  journal: RunJournal;
  runId: string;
  state: { funding: SignedFunding | null; funded: string | null };
  log: (line: string) => void;
};

/**
 * Funds the run's wallet with the budget, once: the signed transfer is journaled before it is sent, so after a
 * crash `--resume` sends the same transaction (its nonce lets it land once) rather than a second one.
 */
export async function fundRun(run: FundingRun, atomic: bigint): Promise<string | null> {
  const { wallets, journal, runId, state, log } = run;
  if (atomic === 0n) return null;
  if (state.funded !== null) return state.funded;
  let signed = state.funding;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (signed === null) {
      signed = await wallets.signFunding(runId, atomic);
      await journal.append({ t: 'fund', k: 'fund', funding: signed });
    }
    log(`funding ${signed.to} with ${signed.amount_atomic} atomic USDC: ${signed.tx}`);
    const outcome = await wallets.sendFunding(signed);
    if (outcome.kind === 'landed') {
      await journal.append({ t: 'funded', k: 'fund', tx: signed.tx });
      state.funded = signed.tx;
      return signed.tx;
    }
    log(`funding ${signed.tx} was dropped (its nonce went to another transaction); signing it again`);
    signed = null;
  }
  throw new Error('the run wallet could not be funded; run --resume to try again');
}

/** The budget in the atomic units of the funding network's USDC, rounded up (the budget itself caps spending). */
export function fundingAtomic(budget: Budget): bigint {
  const decimals = canonicalUsdc(FUNDING_NETWORK)?.decimals ?? 6;
  const unit = 10n ** BigInt(18 - decimals);
  return (budget.limit + unit - 1n) / unit;
}
