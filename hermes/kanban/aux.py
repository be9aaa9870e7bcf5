"""Specify (#260) and decompose (#259): one auxiliary-model call each, parsed by code.

``specify`` asks for a JSON ``{"title", "body"}`` that replaces a triage card's;
a reply with no JSON object becomes the body as it is. ``decompose`` asks for
``{"tasks": [{"title", "body", "parents": [index...]}]}``: code keeps each task
with a title, drops a parent link that is not an earlier task's index (so no
cycle can form), and ignores any ``assignee`` (no worker profiles here: every
subcard goes to the default worker). A failed call raises ``AuxFailed``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
import trio

from hermes.goals.judge import _json_object
from hermes.model.types import Message, ModelRequest, TextBlock

from .cards import BODY_LIMIT, TITLE_LIMIT

if TYPE_CHECKING:
    from hermes.model.client import ModelClient

MAX_TOKENS = 4096
MAX_SUBCARDS = 12

SPECIFY_SYSTEM = (
    "You turn a rough kanban card into a clear task for an autonomous coding agent that "
    "will work on it alone. Keep the intent; add the concrete deliverable, the acceptance "
    "criteria (how to verify it is done) and what is out of scope. Reply only with one JSON "
    'object: {"title": "a short imperative title", "body": "the full specification"}'
)
DECOMPOSE_SYSTEM = (
    "You split a kanban card into a few smaller cards that autonomous coding agents can "
    "each finish alone, in order. Each card has a short title and a body with its own "
    "acceptance criteria. A card may depend on earlier cards: list their 0-based indices "
    "in parents. Reply only with one JSON object: "
    '{"tasks": [{"title": "...", "body": "...", "parents": []}]}. '
    'If the card is already small enough, reply {"tasks": []}.'
)


class AuxFailed(Exception):
    """The auxiliary model did not answer usefully; the message says how."""


@attrs.frozen(slots=True)
class Spec:
    title: str
    body: str


@attrs.frozen(slots=True)
class Part:
    title: str
    body: str
    parents: tuple[int, ...] = ()


def card_text(title: str, body: str) -> str:
    return f"Card title: {title}\n\nCard body:\n{body or '(empty)'}"


async def _ask(client: ModelClient, model: str, system: str, prompt: str, timeout: float) -> str:
    from hermes.model.errors import ModelError  # the SDK loads late

    request = ModelRequest(
        model=model,
        messages=(Message.user(prompt),),
        max_tokens=MAX_TOKENS,
        system=(TextBlock(system),),
        cache_conversation=False,
    )
    with trio.move_on_after(timeout):
        try:
            response = await client.complete(request)
        except ModelError as error:
            raise AuxFailed(f"the auxiliary model's call failed: {error}") from None
        return response.message.text()
    raise AuxFailed(f"the auxiliary model did not answer within {timeout:g} s")


async def specify(client: ModelClient, model: str, title: str, body: str, timeout: float) -> Spec:
    reply = await _ask(client, model, SPECIFY_SYSTEM, card_text(title, body), timeout)
    return read_spec(reply, title)


def read_spec(reply: str, title: str) -> Spec:
    """The JSON's title and body; without JSON, the whole reply is the body."""
    data = _json_object(reply)
    if data is None:
        if not reply.strip():
            raise AuxFailed("the auxiliary model's reply was empty")
        return Spec(title, reply.strip()[:BODY_LIMIT])
    new_title = data.get("title")
    new_body = data.get("body")
    if not isinstance(new_title, str) or not new_title.strip():
        new_title = title
    if not isinstance(new_body, str):
        new_body = reply.strip()
    return Spec(new_title.strip()[:TITLE_LIMIT], new_body[:BODY_LIMIT])


async def decompose(
    client: ModelClient, model: str, title: str, body: str, timeout: float
) -> list[Part]:
    reply = await _ask(client, model, DECOMPOSE_SYSTEM, card_text(title, body), timeout)
    return read_parts(reply)


def read_parts(reply: str) -> list[Part]:
    """The tasks of the reply (see the module docstring); no JSON at all is ``AuxFailed``."""
    data: Any = _json_object(reply)
    if data is None:
        shown = " ".join(reply.split())[:200]
        raise AuxFailed(f"the decomposer's reply held no JSON object ({shown!r})")
    tasks = data.get("tasks")
    if not isinstance(tasks, list):
        raise AuxFailed("the decomposer's reply has no tasks list")
    parts: list[Part] = []
    for task in tasks[:MAX_SUBCARDS]:
        if not isinstance(task, dict):
            continue
        title = task.get("title")
        if not isinstance(title, str) or not title.strip():
            continue
        body = task.get("body")
        links = task.get("parents")
        index = len(parts)
        parents = tuple(
            dict.fromkeys(
                p for p in (links if isinstance(links, list) else [])
                if type(p) is int and 0 <= p < index
            )
        )  # fmt: skip
        parts.append(
            Part(
                title.strip()[:TITLE_LIMIT],
                body[:BODY_LIMIT] if isinstance(body, str) else "",
                parents,
            )
        )
    return parts
