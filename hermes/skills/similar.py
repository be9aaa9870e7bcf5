"""Near-duplicate skills: pairs whose words overlap past a threshold (seed #270's candidates).

A skill's words are the lower-cased words of three letters or more of its
description and body. Two skills' similarity is the Jaccard index of those
sets (shared words over all words). Plain word overlap: it finds two
write-ups of the same procedure, not two procedures that only mean the same.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .format import Skill

_WORD = re.compile(r"[a-z0-9][a-z0-9_-]{2,}")


def words(skill: Skill) -> frozenset[str]:
    """The words compared (description and body, lower-cased, three letters or more)."""
    return frozenset(_WORD.findall(f"{skill.description}\n{skill.body}".lower()))


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """The Jaccard index of two word sets (0 when both are empty)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def near_duplicates(skills: Sequence[Skill], threshold: float) -> list[tuple[Skill, Skill, float]]:
    """Pairs (sorted by name inside, most similar first) at or above ``threshold``."""
    ordered = sorted(skills, key=lambda s: s.name)
    sets = [words(s) for s in ordered]
    pairs = []
    for i, first in enumerate(ordered):
        for j in range(i + 1, len(ordered)):
            score = similarity(sets[i], sets[j])
            if score >= threshold:
                pairs.append((first, ordered[j], round(score, 3)))
    pairs.sort(key=lambda p: (-p[2], p[0].name, p[1].name))
    return pairs
