"""Context compression: prune, summarise the middle, commit in one shielded step.

This package's pure part: settings, token estimates, pruning, boundaries, the
summary prompt and its checks, the static fallback, assembly and the policy.
"""

from hermes.compression.assemble import assemble, validate_transcript
from hermes.compression.boundaries import Split, head_end, split, tail_start
from hermes.compression.failures import SummaryFailure, aborts, model_failure
from hermes.compression.marker import (
    SUMMARY_END,
    SUMMARY_MARKER,
    find_previous_summary,
    strip_summary,
    summary_block_text,
)
from hermes.compression.plan import CompactionPlan, finish_plan, plan_compaction
from hermes.compression.policy import CompressionPolicy, Decision, FailureState
from hermes.compression.prune import PruneResult, prune_tool_results
from hermes.compression.settings import (
    CompressionSettings,
    tail_budget_tokens,
    threshold_ratio,
    threshold_tokens,
)
from hermes.compression.static import static_summary
from hermes.compression.summary import (
    SECTIONS,
    SUMMARY_SYSTEM,
    GarbageSummary,
    accept_summary,
    summary_prompt,
)
from hermes.compression.tokens import ContextMeter, estimate_tokens, message_tokens

__all__ = [
    "SECTIONS",
    "SUMMARY_END",
    "SUMMARY_MARKER",
    "SUMMARY_SYSTEM",
    "CompactionPlan",
    "CompressionPolicy",
    "CompressionSettings",
    "ContextMeter",
    "Decision",
    "FailureState",
    "GarbageSummary",
    "PruneResult",
    "Split",
    "SummaryFailure",
    "aborts",
    "accept_summary",
    "assemble",
    "estimate_tokens",
    "find_previous_summary",
    "finish_plan",
    "head_end",
    "message_tokens",
    "model_failure",
    "plan_compaction",
    "prune_tool_results",
    "split",
    "static_summary",
    "strip_summary",
    "summary_block_text",
    "summary_prompt",
    "tail_budget_tokens",
    "tail_start",
    "threshold_ratio",
    "threshold_tokens",
    "validate_transcript",
]
