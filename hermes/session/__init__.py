"""Sessions: the turn loop and its control verbs (being built; see issue 5).

Today: the three-tier system prompt (``prompt``) and the turn-loop guardrails
(``guards``).
"""

from .guards import RepeatCheck, RepeatGuard, UnknownToolStreak, Verdict
from .prompt import PromptParts, build_system_prompt, find_context_file

__all__ = [
    "PromptParts",
    "RepeatCheck",
    "RepeatGuard",
    "UnknownToolStreak",
    "Verdict",
    "build_system_prompt",
    "find_context_file",
]
