"""The threat scan: text about to enter a prompt, checked for injection and exfiltration.

Looks for prompt-injection phrasing ("ignore previous instructions"),
invisible and bidirectional Unicode, hidden HTML (comments, ``display:none``)
and exfiltration instructions ("send the contents of ~/.ssh"). Full-width
characters are folded first (NFKC), full-width ``ignore`` is caught too. A
``critical`` finding makes the verdict ``dangerous`` (the text is blocked); a
``high`` one ``caution`` (it still loads).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import Literal

import attrs

Severity = Literal["critical", "high"]
Verdict = Literal["safe", "caution", "dangerous"]

INVISIBLE = frozenset(
    "\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad"  # zero-width, soft hyphen
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f"  # bidi controls
)

_RULES: tuple[tuple[str, Severity, str], ...] = (
    (
        "ignore_instructions",
        "critical",
        r"\b(ignore|disregard|forget|override)\s+(all\s+|any\s+)?(the\s+)?(previous|prior|"
        r"above|earlier|preceding|system|your)\s+(instructions|prompts?|rules|directions)",
    ),
    (
        "new_identity",
        "high",
        r"\byou\s+are\s+now\s+(a|an|no\s+longer|in)\b|\bnew\s+system\s+prompt\b",
    ),
    (
        "hide_from_user",
        "critical",
        r"\b(do\s+not|don't|never)\s+(tell|inform|mention\s+(this\s+)?to|show)\s+the\s+user",
    ),
    (
        "exfiltrate_secrets",
        "critical",
        r"\b(send|upload|post|exfiltrate|transmit|forward|curl|wget|copy)\b[^\n]{0,80}"
        r"(~/\.ssh|\.ssh/|id_rsa|id_ed25519|\.aws/credentials|\.netrc|\.env\b|"
        r"api[_ ]?keys?|secrets?|passwords?|tokens?|credentials)",
    ),
    (
        "read_secrets_to_url",
        "critical",
        r"(cat|base64)\s+[^\n|]*(~/\.ssh|id_rsa|\.aws/credentials|\.netrc)[^\n]*\|\s*"
        r"(curl|wget|nc)\b",
    ),
    ("hidden_html_comment", "high", r"<!--[\s\S]*?-->"),
    (
        "hidden_html_style",
        "critical",
        r"<[a-z][^>]*style\s*=\s*[\"'][^\"']*(display\s*:\s*none|visibility\s*:\s*hidden|"
        r"font-size\s*:\s*0)",
    ),
)
_PATTERNS = tuple((key, sev, re.compile(rx, re.IGNORECASE)) for key, sev, rx in _RULES)
_TRIGGERS: dict[str, tuple[str, ...]] = {
    "ignore_instructions": ("ignore", "disregard", "forget", "override"),
    "new_identity": ("now", "system"),
    "hide_from_user": ("user",),
    "exfiltrate_secrets": (
        "send",
        "upload",
        "post",
        "exfiltrate",
        "transmit",
        "forward",
        "curl",
        "wget",
        "copy",
    ),
    "read_secrets_to_url": ("cat", "base64"),
    "hidden_html_comment": ("<!--",),
    "hidden_html_style": ("style",),
}
"""Words a rule cannot match without, checked on the lower-cased text first (most text has
none, and a substring test is far cheaper than the pattern). Single words only: the
patterns allow any run of blanks between words."""


@attrs.frozen(slots=True)
class Finding:
    """One hit: the rule, how bad it is, the line (1-based) and the matched text (cut)."""

    key: str
    severity: Severity
    line: int
    excerpt: str

    def describe(self) -> str:
        return f"{self.key} (line {self.line}: {self.excerpt!r})"


@attrs.frozen(slots=True)
class ScanResult:
    """The findings of one scan, worst first, and the verdict they give."""

    findings: tuple[Finding, ...] = ()

    @property
    def verdict(self) -> Verdict:
        if any(f.severity == "critical" for f in self.findings):
            return "dangerous"
        return "caution" if self.findings else "safe"

    @property
    def blocked(self) -> bool:
        return self.verdict == "dangerous"

    def reason(self) -> str:
        """The worst finding, for a BLOCKED notice."""
        return self.findings[0].describe() if self.findings else "no findings"


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


_INVISIBLE_RE = re.compile("[" + "".join(sorted(INVISIBLE)) + "\U000e0000-\U000e007f]")


def _invisible(text: str) -> Iterable[Finding]:
    match = _INVISIBLE_RE.search(text)  # one is enough: the file is blocked either way
    if match is not None:
        ch = match.group(0)
        kind = "bidi_control" if unicodedata.bidirectional(ch) in _BIDI else "invisible_unicode"
        yield Finding(kind, "critical", _line_of(text, match.start()), f"U+{ord(ch):04X}")


_BIDI = frozenset({"LRE", "RLE", "PDF", "LRO", "RLO", "LRI", "RLI", "FSI", "PDI", "LRM", "RLM"})


def scan_text(text: str) -> ScanResult:
    """Scan ``text``; findings are ordered critical first, then by line."""
    findings = list(_invisible(text))
    folded = unicodedata.normalize("NFKC", text)
    lowered = folded.lower()
    for key, severity, pattern in _PATTERNS:
        if not any(word in lowered for word in _TRIGGERS[key]):
            continue
        match = pattern.search(folded)
        if match is not None:
            excerpt = " ".join(match.group(0).split())[:80]
            findings.append(Finding(key, severity, _line_of(folded, match.start()), excerpt))
    findings.sort(key=lambda f: (f.severity != "critical", f.line))
    return ScanResult(tuple(findings))


def blocked_notice(label: str, result: ScanResult) -> str:
    """What stands in a prompt in place of blocked text."""
    return f"[BLOCKED: {label} was not loaded: the threat scan found {result.reason()}]"


@attrs.frozen(slots=True)
class Blocked:
    """Something a session's prompt took in that the scan called dangerous, for the person.

    ``what``: ``context file``, ``identity`` (``SOUL.md``), ``memory entry N of
    MEMORY.md``, ``project skill NAME``; ``notice``: the text that stands in the
    prompt in its place ("" when nothing does: a quarantined skill is left out
    of the index, the person's own ``SOUL.md`` loads anyway); ``effect``:
    ``blocked``, ``quarantined`` or ``loaded anyway``.
    """

    what: str
    path: str
    finding: str
    notice: str
    effect: str


BlockReport = Callable[[Blocked], None]
"""Told of each ``Blocked`` as a prompt is built (the session publishes it)."""
