"""The vocabulary of ``test_valid_history``: actions, scripted replies, and the checker.

``check_history`` re-validates a transcript on its own, without trusting
``hermes.store.validate``: it is written from the Messages API's rules, not
from the store's code, so a bug shared by the session and the store's
validator would still be caught. It also checks two API rules the store does
not: no message without content, and tool results before any text in a user
message.

``actions`` draws one step of a scenario: a prompt (a scripted reply from
``REPLIES``, a busy mode, a patient or impatient caller), a verb, a pause, or
a crash (of the turn, a tool worker, the session or the store), weighted so
that turns are often busy when verbs and crashes land.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import attrs
from hypothesis import strategies as st

from hermes.fake import (
    ErrorReply,
    FailFirst,
    Reply,
    Reset,
    Stall,
    Text,
    ToolUse,
    Truncate,
)
from hermes.fake.script import Scripted
from hermes.model.types import (
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

# -- the checker -----------------------------------------------------------------------

_USER_BLOCKS = (TextBlock, ImageBlock, ToolResultBlock)
_ASSISTANT_BLOCKS = (TextBlock, ThinkingBlock, RedactedThinkingBlock, ToolUseBlock)


def check_history(messages: Sequence[Message], *, settled: bool) -> list[str]:
    """Every way ``messages`` breaks the API's history rules (empty: valid).

    ``settled`` (the session is idle): no tool_use may be left without a result.
    Otherwise only the last assistant message may have open tool uses (the
    batch in flight).
    """
    problems: list[str] = []
    if messages and messages[0].role != "user":
        problems.append(f"seq 0: the first message is the {messages[0].role}'s, not the user's")
    all_uses: Counter[str] = Counter()
    for seq, message in enumerate(messages):
        where = f"seq {seq} ({message.role})"
        if message.role not in ("user", "assistant"):
            problems.append(f"{where}: unknown role")
            continue
        if seq > 0 and messages[seq - 1].role == message.role:
            problems.append(f"{where}: follows a {message.role} message (roles must alternate)")
        if not message.content:
            problems.append(f"{where}: no content blocks")
        allowed = _USER_BLOCKS if message.role == "user" else _ASSISTANT_BLOCKS
        for index, block in enumerate(message.content):
            if not isinstance(block, allowed):
                problems.append(f"{where}: block {index} is a {type(block).__name__}")
        if message.role == "assistant":
            uses = [b.id for b in message.content if isinstance(b, ToolUseBlock)]
            all_uses.update(uses)
            following = messages[seq + 1] if seq + 1 < len(messages) else None
            if following is None:
                if uses and settled:
                    problems.append(f"{where}: tool_use {uses} have no result (session idle)")
                continue
            answered = Counter(
                b.tool_use_id for b in following.content if isinstance(b, ToolResultBlock)
            )
            # A batch in flight: its results message is rewritten as results land.
            in_flight = not settled and seq + 2 == len(messages)
            for use in uses:
                if answered[use] > 1 or (answered[use] == 0 and not in_flight):
                    problems.append(
                        f"{where}: tool_use {use!r} has {answered[use]} results in seq {seq + 1}"
                    )
        else:
            previous = messages[seq - 1] if seq > 0 else None
            asked = (
                {b.id for b in previous.content if isinstance(b, ToolUseBlock)}
                if previous is not None and previous.role == "assistant"
                else set()
            )
            seen_text = False
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    if block.tool_use_id not in asked:
                        problems.append(
                            f"{where}: tool_result {block.tool_use_id!r} answers no tool_use "
                            "of the message before it"
                        )
                    if seen_text:
                        problems.append(
                            f"{where}: tool_result {block.tool_use_id!r} comes after text "
                            "(the API wants tool results first)"
                        )
                else:
                    seen_text = True
    for use, count in all_uses.items():
        if count > 1:
            problems.append(f"tool_use id {use!r} appears {count} times")
    return problems


# -- scripted replies ------------------------------------------------------------------

SLEEP = "sleep 0.25"


def _words(n: int) -> tuple[str, ...]:
    return tuple(f"w{i} " for i in range(n))


REPLIES: dict[str, Callable[[], list[Scripted]]] = {
    "text": lambda: [Reply.of("a plain answer")],
    "slow_text": lambda: [Reply.of(Text(deltas=_words(12)), event_delay=0.025)],
    "sleep": lambda: [Reply.of("waiting", ToolUse("terminal", {"command": SLEEP}))],
    "echo": lambda: [Reply.of(ToolUse("terminal", {"command": "echo hi"}))],
    "read_file": lambda: [Reply.of(ToolUse("read_file", {"path": "a.txt"}))],
    "unknown_tool": lambda: [Reply.of(ToolUse("no_such_tool", {"x": 1}))],
    "broken_json": lambda: [
        Reply.of("calling", ToolUse("terminal", fragments=('{"command": "ec', "ho")))
    ],
    "batch": lambda: [
        Reply.of(
            "several",
            ToolUse("terminal", {"command": SLEEP}),
            ToolUse("read_file", {"path": "a.txt"}),
            ToolUse("terminal", {"command": "echo two"}),
            ToolUse("no_such_tool", {}),
        )
    ],
    "two_steps": lambda: [
        Reply.of(ToolUse("terminal", {"command": SLEEP})),
        Reply.of("next", ToolUse("read_file", {"path": "a.txt"})),
    ],
    "stubborn": lambda: [
        Reply.of("stubborn", ToolUse("terminal", {"command": "trap '' TERM; echo ready; sleep 1"}))
    ],
    "tool_timeout": lambda: [Reply.of(ToolUse("terminal", {"command": "sleep 5", "timeout": 1}))],
    "three_steps": lambda: [  # the iteration budget (3) is spent: a tool-less summary
        Reply.of(ToolUse("terminal", {"command": "echo 1"})),
        Reply.of(ToolUse("terminal", {"command": "echo 2"})),
        Reply.of(ToolUse("terminal", {"command": "echo 3"})),
        Reply.of("summary, with a tool use that must be dropped", ToolUse("read_file", {})),
    ],
    "unknown_x3": lambda: [  # three batches of unknown tools end the turn
        Reply.of(ToolUse("no_such_tool", {"n": n})) for n in range(3)
    ],
    "error_500": lambda: [ErrorReply(500)],
    "error_529": lambda: [ErrorReply(529, retry_after_ms=1)],
    "error_400": lambda: [ErrorReply(400, message="bad request (scripted)")],
    "fail_first": lambda: [
        FailFirst(2, ErrorReply(529, retry_after_ms=1), then=Reply.of("after two failures"))
    ],
    "truncate": lambda: [Reply.of(Text(deltas=_words(6)), event_delay=0.01, fault=Truncate(5))],
    "reset": lambda: [Reply.of(Text(deltas=_words(6)), event_delay=0.01, fault=Reset(5))],
    "stall": lambda: [Reply.of(Text(deltas=_words(6)), fault=Stall(5))],
}

MODES = (None, "interrupt", "queue", "steer", "reject", "rollback")

# -- actions ---------------------------------------------------------------------------


@attrs.frozen
class Prompt:
    """Submit a prompt (waiting for its result in the background) with a scripted reply."""

    reply: str
    mode: str | None = None
    patient: bool = True
    """False: the caller gives up after 50 ms (a call timeout); the prompt still runs."""


@attrs.frozen
class Steer:
    pass


@attrs.frozen
class Redirect:
    pass


@attrs.frozen
class Interrupt:
    pass


@attrs.frozen
class Cancel:
    """Hard-cancel the running turn, once ``when`` holds (see ``WHEN``)."""

    when: str = "now"


@attrs.frozen
class Pause:
    seconds: float


@attrs.frozen
class WaitIdle:
    pass


@attrs.frozen
class CrashTurn:
    """Kill the running turn actor by its path, once ``when`` holds (see ``WHEN``)."""

    when: str = "busy"


@attrs.frozen
class KillWorker:
    """Kill a running tool worker (waiting up to a moment for one to start)."""


@attrs.frozen
class CrashSession:
    """Kill the session actor itself; its supervisor restarts it on the same transcript."""

    when: str = "now"


@attrs.frozen
class CrashStore:
    """Kill the store actor; its supervisor restarts it on the same database file."""

    when: str = "busy"


WHEN = ("now", "busy", "tool")
"""When a crash lands: at once, once a turn runs, once a tool worker runs (each
waited for a moment at most, then it lands anyway)."""


Action = (
    Prompt
    | Steer
    | Redirect
    | Interrupt
    | Cancel
    | Pause
    | WaitIdle
    | CrashTurn
    | KillWorker
    | CrashSession
    | CrashStore
)

SLOW = ("slow_text", "sleep", "batch", "two_steps", "stubborn", "stubborn")
"""Replies that keep a turn busy for a while: drawn more often, so that verbs and
crashes find a turn (and tool workers) to act on."""

prompts = st.builds(
    Prompt,
    st.sampled_from([*sorted(REPLIES), *SLOW]),
    st.sampled_from(MODES),
    st.sampled_from([True, True, True, False]),
)
_soft_verbs = st.sampled_from([Steer(), Redirect(), Interrupt(), WaitIdle(), KillWorker()])
_cancels = st.builds(Cancel, st.sampled_from(WHEN))
verbs = st.sampled_from([_soft_verbs, _soft_verbs, _cancels]).flatmap(lambda strategy: strategy)
_crashes = st.one_of(
    st.builds(CrashTurn, st.sampled_from(WHEN[1:])),
    st.builds(CrashSession, st.sampled_from(WHEN)),
    st.builds(CrashStore, st.sampled_from(WHEN[1:])),
)
_pauses = st.builds(Pause, st.sampled_from([0.0, 0.01, 0.05, 0.15, 0.3]))
actions: st.SearchStrategy[Action] = st.sampled_from(
    # Weights: prompts 4, verbs 2, pauses 1, crashes 1 (``one_of`` would not weight).
    [prompts, prompts, prompts, prompts, verbs, verbs, _pauses, _crashes]
).flatmap(lambda strategy: strategy)
