"""Staged proposals: propose, list, approve, reject; stale ones; the bound; pending.json."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from hermes.memory import (
    InvalidEntry,
    MemoryStore,
    MemoryUnreadable,
    NoMatch,
    ProposalNotFound,
    StaleProposal,
    TooManyProposals,
)

from .conftest import disk


@pytest.fixture
def seeded(store: MemoryStore) -> MemoryStore:
    store.add("memory", "Editor: vim")
    store.add("memory", "Deploys go through make release")
    store.add("user", "Name: Ada")
    return store


def test_propose_stages_without_touching_the_entries(seeded: MemoryStore, memdir: Path) -> None:
    memory_before = seeded.path("memory").read_bytes()
    before = time.time()
    proposal = seeded.propose("replace", "memory", " vim ", "Editor: neovim", origin="s-42")
    assert re.fullmatch(r"mp-[0-9a-f]{8}", proposal.id)
    assert (proposal.op, proposal.kind, proposal.match, proposal.text) == (
        "replace",
        "memory",
        "vim",
        "Editor: neovim",
    )
    assert proposal.entry == "Editor: vim" and proposal.origin == "s-42"
    assert before <= proposal.created_at <= time.time()
    assert (
        proposal.describe()
        == f"{proposal.id} replace in MEMORY.md: 'Editor: vim' -> 'Editor: neovim'"
    )
    assert seeded.path("memory").read_bytes() == memory_before
    assert seeded.proposals() == [proposal]
    assert MemoryStore(memdir).proposals() == [proposal]  # persisted
    data = json.loads((memdir / "pending.json").read_text())
    assert data["version"] == 1 and data["proposals"][0]["id"] == proposal.id


def test_propose_is_validated_now(seeded: MemoryStore, memdir: Path) -> None:
    before = disk(memdir)
    with pytest.raises(NoMatch, match=r"No entry in USER\.md contains 'vim'"):
        seeded.propose("remove", "user", "vim")
    with pytest.raises(InvalidEntry, match="nothing to propose"):
        seeded.propose("replace", "memory", "vim", "Editor: vim")
    with pytest.raises(InvalidEntry, match="needs the new text"):
        seeded.propose("replace", "memory", "vim")
    assert disk(memdir) == before and seeded.proposals() == []


def test_approve_applies_and_clears(seeded: MemoryStore) -> None:
    replace = seeded.propose("replace", "memory", "vim", "Editor: neovim", origin="s1")
    remove = seeded.propose("remove", "user", "Ada", origin="s1")
    change = seeded.approve(replace.id)
    assert (change.op, change.old, change.new) == ("replace", "Editor: vim", "Editor: neovim")
    assert seeded.entries("memory")[0] == "Editor: neovim"
    assert seeded.proposals() == [remove]
    assert seeded.approve(remove.id).old == "Name: Ada"
    assert seeded.entries("user") == [] and seeded.proposals() == []
    with pytest.raises(ProposalNotFound, match=replace.id):
        seeded.approve(replace.id)


def test_reject_drops_without_applying(seeded: MemoryStore) -> None:
    proposal = seeded.propose("remove", "memory", "make release")
    assert seeded.reject(proposal.id) == proposal
    assert seeded.proposals() == []
    assert "Deploys go through make release" in seeded.entries("memory")
    with pytest.raises(ProposalNotFound):
        seeded.reject(proposal.id)


def test_stale_proposal_errors_and_stays_pending(seeded: MemoryStore, memdir: Path) -> None:
    proposal = seeded.propose("replace", "memory", "vim", "Editor: neovim")
    seeded.remove("memory", "vim")  # the person edited it meanwhile
    before = disk(memdir)
    with pytest.raises(StaleProposal) as info:
        seeded.approve(proposal.id)
    message = str(info.value)
    assert message.startswith(f"Proposal {proposal.id} no longer applies: No entry in MEMORY.md")
    assert "It stays pending" in message
    assert disk(memdir) == before
    assert seeded.proposals() == [proposal]
    seeded.reject(proposal.id)
    assert seeded.proposals() == []


def test_pending_is_bounded_and_deduplicated(memdir: Path) -> None:
    store = MemoryStore(memdir, max_pending=3)
    for i in range(4):
        store.add("memory", f"entry number {i}")
    first = store.propose("remove", "memory", "number 0", origin="a")
    assert store.propose("remove", "memory", "number 0", origin="b") == first  # same edit
    store.propose("remove", "memory", "number 1")
    store.propose("replace", "memory", "number 2", "entry two")
    with pytest.raises(TooManyProposals) as info:
        store.propose("remove", "memory", "number 3")
    assert "3 memory proposals are already waiting" in str(info.value)
    assert len(store.proposals()) == 3


def test_default_bound_is_50(store: MemoryStore) -> None:
    for i in range(51):
        store.add("memory", f"e{i:02d}")
    for i in range(50):
        store.propose("remove", "memory", f"e{i:02d}")
    with pytest.raises(TooManyProposals, match="the limit is 50"):
        store.propose("remove", "memory", "e50")


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        '{"version": 2, "proposals": []}',
        '{"version": 1, "proposals": [{"id": "mp-1"}]}',
        b"\xff\xfe",
    ],
)
def test_malformed_pending_file_is_never_overwritten(
    seeded: MemoryStore, memdir: Path, content: str | bytes
) -> None:
    path = memdir / "pending.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    before = path.read_bytes()
    with pytest.raises(MemoryUnreadable, match=r"pending\.json"):
        seeded.propose("remove", "memory", "vim")
    with pytest.raises(MemoryUnreadable):
        seeded.proposals()
    assert path.read_bytes() == before
    seeded.add("memory", "store writes still work")  # only the pending list is blocked
