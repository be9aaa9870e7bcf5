"""The strict scan of a job's prompt (seed #119), at create, edit and run-now.

A prompt runs later, unattended, with the daemon's tools: text that tries to
steer the model away from its instructions, read secrets, destroy data or
send secrets out is refused before it is stored. Fixed lists, as in Hermes:
invisible Unicode (zero-width, bidirectional controls, tag characters) blocks
the prompt, then eight injection, secret-reading and destructive patterns and
five curl/wget exfiltration patterns. A match refuses the job with what
matched; nothing is rewritten.
"""

from __future__ import annotations

import re
import unicodedata

_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff\U000e0000-\U000e007f]")
_SECRET = r"(?:api[_-]?key|token|secret|passw(?:or)?d|credential|private[_-]?key)"

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (why, re.compile(rx, re.IGNORECASE))
    for why, rx in (
        (
            "an instruction to ignore earlier instructions",
            r"\b(?:ignore|disregard|forget)\b.{0,40}\b(?:previous|prior|above|earlier|all|your)\b"
            r".{0,20}\b(?:instructions?|prompts?|rules|directives)\b",
        ),
        (
            "a new identity for the model",
            r"\byou are (?:now|no longer)\b|\bact as (?:an? )?(?:unrestricted|jailbroken|dan)\b",
        ),
        (
            "a request to reveal the system prompt",
            r"\b(?:reveal|print|show|output|repeat)\b.{0,20}\bsystem prompt\b",
        ),
        (
            "a hidden-instruction marker",
            r"<\s*/?\s*(?:system|instructions?)\s*>|\[\s*(?:system|inst)\s*\]",
        ),
        (
            "reading secret files",
            r"\b(?:cat|less|more|head|tail|base64|xxd|cp|scp)\b[^\n]{0,80}"
            r"(?:\.ssh/|id_rsa|id_ed25519|\.env\b|/etc/shadow|\.aws/credentials|\.netrc|\.pgpass)",
        ),
        (
            "dumping secrets from the environment",
            rf"\b(?:printenv|env|set)\b[^\n]{{0,40}}\b{_SECRET}\b|\becho\s+\$\{{?\w*{_SECRET}",
        ),
        (
            "a destructive command",
            r"\brm\s+-[a-z]*r[a-z]*f?[a-z]*\s+(?:/|~|\$home|\*)(?:\s|$)|\bmkfs\b|"
            r"\bdd\b[^\n]{0,60}\bof=/dev/|:\(\)\s*\{\s*:\|:&\s*\};:",
        ),
        (
            "turning off safety checks",
            r"\b(?:disable|bypass|turn off|skip)\b.{0,30}\b(?:approvals?|safety|guard(?:rail)?s?"
            r"|sandbox)\b",
        ),
        (
            "sending a secret with curl or wget",
            rf"\b(?:curl|wget)\b[^\n]{{0,200}}\$\{{?\w*{_SECRET}",
        ),
        (
            "uploading a file with curl",
            r"\bcurl\b[^\n]{0,200}(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form|-T|"
            r"--upload-file)\s*\S*@",
        ),
        ("uploading a file with wget", r"\bwget\b[^\n]{0,200}--(?:post|body)-file"),
        (
            "piping output to a network command",
            r"\|\s*(?:curl|wget|nc|ncat|netcat|socat)\b",
        ),
        (
            "sending command output with curl or wget",
            r"\b(?:curl|wget)\b[^\n]{0,200}(?:\$\(|`)[^\n]{0,100}(?:\)|`)",
        ),
    )
)
"""(why, pattern): the eight injection/secret/destructive ones, then the five exfiltration ones."""


class PromptRefused(ValueError):
    """A prompt the strict scan refused; the message says what matched."""


def scan_prompt(prompt: str) -> None:
    """Refuse ``prompt`` (``PromptRefused``) if the strict scan matches."""
    hidden = _INVISIBLE.search(prompt)
    if hidden is not None:
        char = hidden.group()
        name = unicodedata.name(char, "unnamed")
        raise PromptRefused(
            f"prompt refused: it holds the invisible character U+{ord(char):04X} ({name}) "
            f"at offset {hidden.start()}"
        )
    for why, pattern in PATTERNS:
        found = pattern.search(prompt)
        if found is not None:
            raise PromptRefused(f"prompt refused: {why} ({found.group()[:80]!r})")
