"""MemoryStore: caps and usage, entry rules, unique-substring matching, unreadable files."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from hermes.memory import (
    ENTRY_DELIMITER,
    AmbiguousMatch,
    DuplicateEntry,
    InvalidEntry,
    MemoryFull,
    MemoryLimits,
    MemoryStore,
    MemoryUnreadable,
    NoMatch,
)

from .conftest import disk


def test_add_writes_entries_joined_by_the_delimiter(store: MemoryStore) -> None:
    first = store.add("memory", "  Repo uses uv, not pip.  ")
    second = store.add("memory", "Tests run with pytest -X dev.")
    assert first.new == "Repo uses uv, not pip." and first.used == 22 and first.cap == 2200
    text = store.path("memory").read_text()
    assert text == "Repo uses uv, not pip.\n§\nTests run with pytest -X dev."
    assert second.used == len(text) == 54
    assert second.usage_text == "54/2,200 chars"
    assert store.usage("memory") == (54, 2200)
    assert store.usage("user") == (0, 1375)
    assert store.entries("memory") == ["Repo uses uv, not pip.", "Tests run with pytest -X dev."]
    assert not store.path("user").exists()


def test_full_store_refuses_with_current_usage(memdir: Path) -> None:
    store = MemoryStore(memdir, MemoryLimits(memory_chars=50, user_chars=20))
    store.add("memory", "a" * 20)
    store.add("memory", "b" * 20)  # 43 used
    before = disk(memdir)
    with pytest.raises(MemoryFull) as info:
        store.add("memory", "c" * 5)
    assert str(info.value) == (
        "MEMORY.md is full: 43 of 50 characters used; this entry needs 8. "
        "Replace or remove entries first."
    )
    assert disk(memdir) == before
    assert store.add("memory", "c" * 4).used == 50  # exactly at the cap fits
    with pytest.raises(MemoryFull, match=r"USER\.md holds at most 20"):
        store.add("user", "u" * 21)
    assert store.add("user", "u" * 20).used == 20


def test_default_caps_use_thousands_separators(store: MemoryStore) -> None:
    store.add("memory", "x" * 2100)
    with pytest.raises(MemoryFull) as info:
        store.add("memory", "y" * 177)
    assert str(info.value) == (
        "MEMORY.md is full: 2,100 of 2,200 characters used; this entry needs 180. "
        "Replace or remove entries first."
    )
    assert store.add("user", "z" * 1375).used == 1375


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("  \n\t ", "empty"),
        ("first\n§\nsecond", "'§'"),
        ("ends with\n§", "'§'"),
        ("bad \ud800 surrogate", "surrogates"),
    ],
)
def test_invalid_entries_are_refused(store: MemoryStore, text: str, message: str) -> None:
    with pytest.raises(InvalidEntry, match=message):
        store.add("memory", text)
    assert store.entries("memory") == []


def test_section_sign_inside_a_line_is_fine(store: MemoryStore) -> None:
    store.add("memory", "See § 4.2 of the spec")
    store.add("memory", "second")
    assert store.entries("memory") == ["See § 4.2 of the spec", "second"]


def test_exact_duplicate_is_a_noop(store: MemoryStore) -> None:
    store.add("memory", "Prefers tabs")
    before = store.path("memory").read_bytes()
    change = store.add("memory", "  Prefers tabs\n")
    assert change.changed is False and change.used == 12
    assert change.describe() == "This exact entry is already in MEMORY.md; nothing changed."
    assert store.path("memory").read_bytes() == before


def test_unknown_store_is_refused(store: MemoryStore) -> None:
    with pytest.raises(InvalidEntry, match="Unknown memory store 'notes'"):
        store.add("notes", "x")


@pytest.mark.parametrize(
    "kwargs", [{"memory_chars": 0}, {"user_chars": -5}, {"memory_chars": True}]
)
def test_limits_must_be_positive(kwargs: dict[str, int]) -> None:
    with pytest.raises(
        ValueError, match=r"memory limits \w+_chars: expected an integer >= 1, got "
    ):
        MemoryLimits(**kwargs)


# -- replace / remove -----------------------------------------------------------------------


@pytest.fixture
def filled(store: MemoryStore) -> MemoryStore:
    for text in ["Editor: vim", "Shell: zsh with oh-my-zsh", "Shell history is in ~/.zsh_hist"]:
        store.add("memory", text)
    return store


def test_replace_the_unique_match(filled: MemoryStore) -> None:
    change = filled.replace("memory", "vim", "Editor: neovim")
    assert (change.op, change.old, change.new) == ("replace", "Editor: vim", "Editor: neovim")
    assert filled.entries("memory")[0] == "Editor: neovim"
    assert change.used == len(filled.path("memory").read_text())


def test_no_match_names_the_store_and_text(filled: MemoryStore) -> None:
    before = filled.path("memory").read_bytes()
    with pytest.raises(NoMatch) as info:
        filled.replace("memory", "emacs", "Editor: emacs")
    assert str(info.value) == "No entry in MEMORY.md contains 'emacs'. Nothing changed."
    with pytest.raises(NoMatch, match=r"USER\.md"):
        filled.remove("user", "vim")
    assert filled.path("memory").read_bytes() == before


def test_ambiguous_match_lists_count_and_previews(filled: MemoryStore) -> None:
    with pytest.raises(AmbiguousMatch) as info:
        filled.remove("memory", "Shell")
    message = str(info.value)
    assert message.startswith("2 entries in MEMORY.md contain 'Shell': ")
    assert "'Shell: zsh with oh-my-zsh'" in message
    assert "'Shell history is in ~/.zsh_hist'" in message
    assert len(filled.entries("memory")) == 3


def test_an_entry_equal_to_the_match_wins(store: MemoryStore) -> None:
    store.add("memory", "uv")
    store.add("memory", "uv is the package manager")
    assert store.remove("memory", "uv").old == "uv"
    assert store.entries("memory") == ["uv is the package manager"]


def test_remove(filled: MemoryStore) -> None:
    change = filled.remove("memory", "oh-my")
    assert (
        change.op == "remove" and change.old == "Shell: zsh with oh-my-zsh" and change.new is None
    )
    assert filled.path("memory").read_text() == "Editor: vim\n§\nShell history is in ~/.zsh_hist"
    assert change.used == 45 == len(filled.path("memory").read_text())


def test_replace_cap_and_duplicates(memdir: Path) -> None:
    store = MemoryStore(memdir, MemoryLimits(memory_chars=30))
    store.add("memory", "a" * 10)
    store.add("memory", "b" * 10)  # 23 used
    with pytest.raises(MemoryFull, match="23 of 30 characters used; this replacement needs 8 more"):
        store.replace("memory", "aaa", "A" * 18)
    assert store.replace("memory", "aaa", "A" * 17).used == 30
    with pytest.raises(DuplicateEntry, match="already reads"):
        store.replace("memory", "AAA", "b" * 10)
    same = store.replace("memory", "bbb", "b" * 10)
    assert same.changed is False


def test_store_over_its_cap_may_shrink(memdir: Path) -> None:
    memdir.mkdir(parents=True)
    (memdir / "MEMORY.md").write_text("x" * 40 + "\n§\n" + "y" * 40)  # edited by hand: 83 > 50
    store = MemoryStore(memdir, MemoryLimits(memory_chars=50))
    with pytest.raises(MemoryFull):
        store.add("memory", "z")
    assert store.replace("memory", "xxx", "x" * 30).used == 73  # shrinks: allowed
    with pytest.raises(MemoryFull):
        store.replace("memory", "xxx", "x" * 31)  # grows: refused
    assert store.remove("memory", "yyy").used == 30


def test_hand_written_file_is_parsed_leniently(memdir: Path, store: MemoryStore) -> None:
    memdir.mkdir(parents=True)
    (memdir / "USER.md").write_text("\n  Name: Ada \n§\n\n§\nLikes: short answers\n")
    assert store.entries("user") == ["Name: Ada", "Likes: short answers"]


# -- unreadable files -----------------------------------------------------------------------


def test_invalid_utf8_file_refuses_writes_and_is_kept(memdir: Path, store: MemoryStore) -> None:
    memdir.mkdir(parents=True)
    bad = b"Editor: vim\n\xa7\nbroken \xff\xfe"
    (memdir / "MEMORY.md").write_bytes(bad)
    writes: list[Callable[[], object]] = [
        lambda: store.add("memory", "new"),
        lambda: store.replace("memory", "vim", "x"),
        lambda: store.remove("memory", "vim"),
    ]
    for write in writes:
        with pytest.raises(MemoryUnreadable) as info:
            write()
        assert str(memdir / "MEMORY.md") in str(info.value)
        assert "not valid UTF-8: byte 0xa7 at offset 12" in str(info.value)
        assert "Refusing to write" in str(info.value)
    assert (memdir / "MEMORY.md").read_bytes() == bad
    with pytest.raises(MemoryUnreadable):
        store.entries("memory")
    store.add("user", "the other store still works")
    assert store.entries("user") == ["the other store still works"]
    snapshot = store.snapshot()
    assert snapshot is not None
    assert snapshot.startswith("## Agent notes (MEMORY.md, unreadable)\n")
    assert "## User profile (USER.md, 27/1,375 chars)\nthe other store still works" in snapshot


def test_directory_in_place_of_a_file_is_unreadable(memdir: Path, store: MemoryStore) -> None:
    (memdir / "MEMORY.md").mkdir(parents=True)
    with pytest.raises(MemoryUnreadable, match="it is a directory"):
        store.add("memory", "x")
    assert (memdir / "MEMORY.md").is_dir()


# -- permissions ----------------------------------------------------------------------------


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_directory_0700_and_files_0600(store: MemoryStore, memdir: Path) -> None:
    assert not memdir.exists()
    store.entries("memory")
    store.snapshot()
    assert not memdir.exists()  # reads create nothing
    store.add("memory", "m")
    store.add("user", "u")
    store.add("memory", "n")
    store.propose("remove", "memory", "m")
    assert mode(memdir) == 0o700
    for name in ("MEMORY.md", "USER.md", "pending.json", ".lock"):
        assert mode(memdir / name) == 0o600, name


def test_rewrite_of_a_world_readable_file_makes_it_0600(memdir: Path, store: MemoryStore) -> None:
    memdir.mkdir(parents=True)
    path = memdir / "USER.md"
    path.write_text("Name: Ada")
    path.chmod(0o644)
    store.add("user", "Likes tea")
    assert mode(path) == 0o600
    assert path.read_text() == "Name: Ada\n§\nLikes tea"


# -- snapshot -------------------------------------------------------------------------------


def test_snapshot_none_when_empty(store: MemoryStore, memdir: Path) -> None:
    assert store.snapshot() is None
    store.add("memory", "x")
    store.remove("memory", "x")
    assert store.path("memory").read_text() == ""
    assert store.snapshot() is None


def test_snapshot_format(store: MemoryStore) -> None:
    store.add("memory", "Repo uses uv")
    store.add("memory", "CI is GitHub Actions")
    assert store.snapshot() == (
        "## Agent notes (MEMORY.md, 35/2,200 chars)\n"
        "Repo uses uv\n§\nCI is GitHub Actions\n\n"
        "## User profile (USER.md, 0/1,375 chars)\n"
        "(empty)"
    )
    store.add("user", "u" * 1200)
    snapshot = store.snapshot()
    assert snapshot is not None
    assert snapshot.endswith("## User profile (USER.md, 1,200/1,375 chars)\n" + "u" * 1200)


def test_snapshot_is_a_frozen_string(store: MemoryStore) -> None:
    store.add("user", "Name: Ada")
    frozen = store.snapshot()
    store.add("user", "Likes tea")
    assert frozen is not None and "Likes tea" not in frozen
    later = store.snapshot()
    assert later is not None and "Name: Ada" + ENTRY_DELIMITER + "Likes tea" in later
