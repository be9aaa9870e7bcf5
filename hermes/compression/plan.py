"""One call for the actor: prune, cut, and everything the summary step needs.

The owner's sequence: ``plan_compaction``; if ``plan.prune_only``, commit
``finish_plan(plan, None, "prune")``; otherwise send ``plan.summary_prompt``
(system ``SUMMARY_SYSTEM``, ``plan.summary_max_tokens``) unless the policy is
in cooldown, pass the reply through ``accept_summary`` (static fallback on
``GarbageSummary`` or failure: ``plan.static_summary()``), then commit
``finish_plan(plan, text, method)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from hermes.compression.assemble import assemble
from hermes.compression.boundaries import Split, split
from hermes.compression.marker import find_previous_summary, strip_summary
from hermes.compression.prune import prune_tool_results
from hermes.compression.settings import (
    CompressionSettings,
    tail_budget_tokens,
    threshold_tokens,
)
from hermes.compression.static import static_summary
from hermes.compression.summary import summary_prompt
from hermes.compression.tokens import estimate_tokens
from hermes.model.types import Message, TextBlock, ToolSpec


@attrs.frozen(slots=True)
class CompactionPlan:
    settings: CompressionSettings
    messages: tuple[Message, ...]
    """The transcript after pruning (what to commit when ``prune_only``)."""
    split: Split
    """The cut: head and tail without old summary blocks; the middle as it was before
    pruning (the summariser sees shortened results rather than placeholders)."""
    previous_summary: str | None
    summary_prompt: str
    """The summary call's user message (system: ``SUMMARY_SYSTEM``)."""
    threshold: int
    before_tokens: int
    """The prompt size before anything (the caller's figure, else the estimate)."""
    pruned_tokens: int
    """``before_tokens`` less what pruning saved (estimated)."""
    pruned_count: int
    saved_chars: int
    prune_only: bool
    """Pruning alone brought the prompt under the threshold: no summary needed."""
    summary_max_tokens: int

    def static_summary(self) -> str:
        """The deterministic fallback summary of the middle."""
        return static_summary(
            self.split.middle,
            self.previous_summary,
            max_chars=self.settings.static_summary_chars,
        )


def plan_compaction(
    messages: Sequence[Message],
    settings: CompressionSettings,
    *,
    context_window: int,
    max_tokens: int,
    focus: str | None = None,
    forced: bool = False,
    current_tokens: int | None = None,
    system: Sequence[TextBlock] | str = (),
    tools: Sequence[ToolSpec] = (),
) -> CompactionPlan | None:
    """Prune, then split; None when there is no middle to compact.

    ``current_tokens`` (e.g. from ``ContextMeter``) beats the rough estimate of
    ``messages`` + ``system`` + ``tools``. ``forced`` (``/compress``) never
    stops at pruning.
    """
    threshold = threshold_tokens(context_window, max_tokens, settings)
    cut = split(messages, settings, tail_budget_tokens(threshold, settings))
    if cut is None:
        return None
    start, stop = cut.head_end, cut.tail_start
    pruned = prune_tool_results(messages, stop, settings)
    saved_tokens = estimate_tokens(cut.middle) - estimate_tokens(pruned.messages[start:stop])
    before = current_tokens
    if before is None:
        before = estimate_tokens(messages, system, tools)
    after_prune = before - saved_tokens
    previous = find_previous_summary(pruned.messages)
    return CompactionPlan(
        settings=settings,
        messages=pruned.messages,
        split=Split(
            tuple(strip_summary(m) for m in cut.head),
            cut.middle,
            tuple(strip_summary(m) for m in cut.tail),
        ),
        previous_summary=previous,
        summary_prompt=summary_prompt(cut.middle, previous, focus),
        threshold=threshold,
        before_tokens=before,
        pruned_tokens=after_prune,
        pruned_count=pruned.pruned_count,
        saved_chars=pruned.saved_chars,
        prune_only=not forced and pruned.pruned_count > 0 and after_prune < threshold,
        summary_max_tokens=settings.summary_max_tokens(context_window),
    )


def finish_plan(plan: CompactionPlan, summary_text: str | None, method: str) -> tuple[Message, ...]:
    """The compacted transcript: head, the summary (``method``: "model"/"static"), tail.

    ``summary_text=None`` is for a prune-only plan: the pruned transcript as it is.
    """
    if summary_text is None:
        if not plan.prune_only:
            raise ValueError("finish_plan: a summary is needed (the plan is not prune-only)")
        return plan.messages
    return assemble(plan.split.head, summary_text, plan.split.tail, method)
