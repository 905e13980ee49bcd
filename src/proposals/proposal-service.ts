import { ProposalRefusal } from "../core/errors.ts";
import type { Clock } from "../core/clock.ts";
import type { Automation, Proposal, Trigger } from "../automations/automation.ts";
import type { AutomationCatalog, AutomationFields, Creator, NewWebhooks } from "../automations/automation-catalog.ts";
import { USER_APPROVAL } from "../automations/approved-version.ts";
import { PROPOSAL_EXPIRY_MS, proposalShape, sameProposal, type ProposalShape } from "./proposal-rules.ts";
import type { DecidedVia, ProposalDecision, ProposalRepository } from "../store/proposal-repository.ts";

export type ProposalConfig = {
  /** A rejected proposal is refused again for this long (option proposalCooldownHours). */
  cooldownMs: number;
  /** Proposals waiting for a decision, per project (option maxPendingProposals). */
  maxPending: number;
};

export type NewProposal = {
  id: string;
  fields: AutomationFields;
  triggers: Trigger[];
  creator: Creator;
  reason: string;
  by: Proposal["by"];
  webhooks?: NewWebhooks;
};

/** Who a proposal made in a session is from, when it is not that session itself (a discovery run's child). */
export type Proposer = (sessionID: string) => { creator: Creator; by: Proposal["by"] } | undefined;

const HOUR_MS = 3600_000;
/** Undecided proposals past their expiry are removed at start and then this often. */
const SWEEP_MS = HOUR_MS;

/**
 * Automations the agent proposes and the user decides on later: a proposal is a disabled
 * automation with a reason; approving enables it, rejecting deletes it and is remembered for the
 * cooldown. Proposals nobody decides expire.
 */
export class ProposalService {
  private sweep: unknown;
  private stopped = false;

  constructor(
    private automations: AutomationCatalog,
    readonly store: ProposalRepository,
    private clock: Clock,
    readonly config: ProposalConfig,
    /** With discovery on: a discovery run's child proposes for the session its run reports to. */
    private proposer: Proposer = () => undefined,
  ) {}

  /** Who a proposal made in this session is from and reports to, when it is not the session itself. */
  proposerOf(sessionID: string): { creator: Creator; by: Proposal["by"] } | undefined {
    return this.proposer(sessionID);
  }

  /** The hourly sweep of expired proposals (they are also refused and removed when touched). */
  start(): void {
    if (this.stopped) return;
    this.sweep = this.clock.setTimeout(() => this.start(), SWEEP_MS);
    try {
      this.expire();
    } catch {
      // A busy or failing database: the next sweep (or the next touch of a proposal) retries.
    }
  }

  stop(): void {
    this.stopped = true;
    this.clock.clearTimeout(this.sweep);
  }

  /** Stores the proposal, disabled; refuses a repeat within the cooldown, or one past the pending limit. */
  propose(p: NewProposal): Automation {
    return this.automations.transaction(() => {
      this.expire();
      this.checkNew(proposalShape(p.fields, p.triggers));
      const proposal: Proposal = { reason: p.reason, proposedAt: this.clock.now(), by: p.by };
      const fields = { ...p.fields, enabled: false };
      return this.automations.create(p.id, fields, p.triggers, p.creator, p.webhooks, proposal).automation;
    });
  }

  /** Proposals waiting for the user, oldest first. */
  pending(): Automation[] {
    this.expire();
    return this.automations.all().filter((a) => a.proposal !== undefined);
  }

  /**
   * Enables it (the caller has the user's approval) and records the decision. `approval`: the key
   * the user was asked (AutomationCatalog.approvalOf); the dashboard and the CLI are the user's own act.
   */
  approve(id: string, via: DecidedVia, patch: Partial<AutomationFields> = {}, approval: string = USER_APPROVAL): Automation {
    this.refuseExpired(id);
    return this.automations.transaction(() => {
      const a = this.requireProposal(id);
      const decision = this.decision(a, "approved", via);
      const approved = this.automations.update(a.id, { ...patch, enabled: true }, approval);
      this.store.record(decision);
      return approved;
    });
  }

  /** Deletes it; proposing the same thing again is refused for the cooldown. */
  reject(id: string, via: DecidedVia): Automation {
    this.refuseExpired(id);
    return this.automations.transaction(() => {
      const a = this.requireProposal(id);
      this.store.record(this.decision(a, "rejected", via));
      return this.automations.delete(a.id);
    });
  }

  /** Rejections within the cooldown, newest first. */
  recentRejections(): ProposalDecision[] {
    return this.store.decisions(this.clock.now() - this.config.cooldownMs, "rejected");
  }

  /** Removes proposals older than the expiry; one process records each. */
  expire(): void {
    const cutoff = this.clock.now() - PROPOSAL_EXPIRY_MS;
    for (const a of this.automations.all()) {
      if (!a.proposal || a.proposal.proposedAt > cutoff) continue;
      this.automations.transaction(() => {
        if (!this.automations.get(a.id)?.proposal) return;
        this.store.record(this.decision(a, "expired", "expiry"));
        this.automations.delete(a.id);
      });
    }
  }

  private checkNew(shape: ProposalShape): void {
    const now = this.clock.now();
    const rejected = this.recentRejections().find((d) => sameProposal(d, shape));
    if (rejected) {
      const hours = Math.floor((now - rejected.decidedAt) / HOUR_MS);
      const left = Math.ceil((rejected.decidedAt + this.config.cooldownMs - now) / HOUR_MS);
      throw new ProposalRefusal(`Refused: the same proposal ("${rejected.title}") was rejected ${hours} h ago (via ${rejected.via}); it may be proposed again in ${left} h. Do not propose it again now.`);
    }
    const pending = this.automations.all().filter((a) => a.proposal !== undefined);
    const twin = pending.find((a) => sameProposal(proposalShape(a, this.automations.triggers(a.id)), shape));
    if (twin) throw new ProposalRefusal(`The same thing is already proposed as ${twin.id} "${twin.title}", waiting for the user's decision.`);
    if (pending.length >= this.config.maxPending) {
      throw new ProposalRefusal(`${pending.length} proposals already wait for the user's decision (at most ${this.config.maxPending}): ${pending.map((a) => `${a.id} "${a.title}"`).join(", ")}. Propose more once the user has approved or rejected one.`);
    }
  }

  private requireProposal(id: string): Automation {
    const a = this.automations.require(id);
    if (!a.proposal) throw new ProposalRefusal(`Automation ${a.id} "${a.title}" is not a proposal (it was approved already); task_update changes it, task_delete deletes it.`);
    return a;
  }

  /** Outside a transaction (the removal must stay when the call is refused): an expired proposal goes now. */
  private refuseExpired(id: string): void {
    const a = this.automations.get(id);
    if (!a?.proposal || a.proposal.proposedAt > this.clock.now() - PROPOSAL_EXPIRY_MS) return;
    this.expire();
    throw new ProposalRefusal(`Proposal ${a.id} "${a.title}" expired (7 days undecided) and is gone; it may be proposed again.`);
  }

  private decision(a: Automation, outcome: ProposalDecision["outcome"], via: DecidedVia): ProposalDecision {
    const shape = proposalShape(a, this.automations.triggers(a.id));
    return { ...shape, proposalId: a.id, reason: a.proposal?.reason ?? "", outcome, via, decidedAt: this.clock.now() };
  }
}
