"""Every ``file.md#anchor`` link between the docs names a heading that exists."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"
LINK = re.compile(r"\]\(([\w.-]*\.md)?#([^)\s]+)\)")


def _slug(heading: str) -> str:
    """The anchor a heading gets on GitHub: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(text: str) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (heading := re.match(r"#{1,6} (.*)", line)):
            slug = _slug(heading.group(1))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def test_every_anchor_link_resolves() -> None:
    texts = {path.name: path.read_text() for path in DOCS.glob("*.md")}
    anchors = {name: _anchors(text) for name, text in texts.items()}
    broken = [
        f"{name}: {target}#{anchor}"
        for name, text in texts.items()
        for target, anchor in ((m.group(1) or name, m.group(2)) for m in LINK.finditer(text))
        if target in anchors and anchor not in anchors[target]
    ]
    assert broken == []
    assert "loop-guardrails" in anchors["tools.md"]
    assert "the-childrens-environment-envpy" in anchors["tools.md"]
