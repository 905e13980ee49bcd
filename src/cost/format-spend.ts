import { countedTokens, type Spend } from "./spend.ts";

/**
 * The one way a spend is shown everywhere: `$0.081 · 15.0k tok` (dollars with three decimals under
 * $1, two from $1; tokens in k or M with one decimal). A model without a price (cost 0) shows tokens only.
 */
export function formatSpend(spend: Spend): string {
  const tokens = `${formatTokens(countedTokens(spend))} tok`;
  return spend.costUsd > 0 ? `${formatUsd(spend.costUsd)} · ${tokens}` : tokens;
}

export function formatUsd(usd: number): string {
  const cents3 = Math.round(usd * 1000) / 1000;
  return cents3 < 1 ? `$${cents3.toFixed(3)}` : `$${usd.toFixed(2)}`;
}

export function formatTokens(n: number): string {
  // Rounded in integers first: 850 / 1000 is 0.84999… in binary and toFixed would say 0.8.
  const tenthsOfK = Math.round(n / 100);
  if (tenthsOfK < 10_000) return `${(tenthsOfK / 10).toFixed(1)}k`;
  return `${(Math.round(n / 100_000) / 10).toFixed(1)}M`;
}
