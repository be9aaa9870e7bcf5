"""The file layer with real processes: lock contention, atomic replace, failed writes."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes.memory import MemoryLocked, MemoryStore, NoMatch
from hermes.memory.files import atomic_write, read_verified

from .conftest import disk

HOLD_LOCK = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
sys.stdin.read()
"""

TRY_LOCK = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("got it")
"""

WRITER = """
import sys
from pathlib import Path
from hermes.memory.files import atomic_write
path, count, size = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
for i in range(count):
    atomic_write(path, "abcdefghijklmnopqrstuvwxyz"[i % 26] * size)
"""

FAILING_ADD = """
import errno, resource, signal, sys
from hermes.memory import MemoryStore
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))
try:
    MemoryStore(sys.argv[1]).add("memory", "y" * 500)
except OSError as exc:
    print("EFBIG" if exc.errno == errno.EFBIG else exc.errno, flush=True)
    sys.exit(3)
"""


def python(script: str, *args: object, **kwargs: object) -> subprocess.Popen[str]:
    return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-c", script, *map(str, args)], text=True, **kwargs
    )


def test_lock_held_by_another_process_raises_after_the_bound(memdir: Path) -> None:
    store = MemoryStore(memdir, lock_timeout=0.3)
    store.add("memory", "before")
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE}
    with python(HOLD_LOCK, store.lock_path, **pipes) as holder:  # exit closes stdin: released
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        before = disk(memdir)
        start = time.monotonic()
        with pytest.raises(MemoryLocked) as info:
            store.add("memory", "during")
        waited = time.monotonic() - start
        assert 0.3 <= waited < 1.5
        assert str(store.lock_path) in str(info.value)
        assert "Memory is busy" in str(info.value) and "Nothing was written" in str(info.value)
        with pytest.raises(MemoryLocked):
            store.propose("remove", "memory", "before")
        assert disk(memdir) == before
        assert store.entries("memory") == ["before"]  # reads take no lock
    assert holder.returncode == 0
    assert store.add("memory", "after").used == len("before\n§\nafter")


def test_lock_is_released_after_every_write(store: MemoryStore) -> None:
    store.add("memory", "x")
    with pytest.raises(NoMatch):
        store.remove("memory", "zzz")  # a refused write releases the lock too
    with python(TRY_LOCK, store.lock_path, stdout=subprocess.PIPE) as probe:
        out, _ = probe.communicate(timeout=10)
    assert probe.returncode == 0 and out == "got it\n"
    other = MemoryStore(store.directory, lock_timeout=0.0)
    assert other.add("memory", "y").used == 5


def test_readers_never_see_a_half_written_file(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    size, count = 256 * 1024, 60
    atomic_write(path, "-" * size)
    reads = 0
    with python(WRITER, path, count, size) as writer:
        while writer.poll() is None:
            text = path.read_text()
            assert len(text) == size and len(set(text)) == 1, f"torn read after {reads} reads"
            reads += 1
    assert writer.returncode == 0
    assert reads > 10
    assert path.read_text() == "abcdefghijklmnopqrstuvwxyz"[(count - 1) % 26] * size
    assert sorted(p.name for p in tmp_path.iterdir()) == ["MEMORY.md"]  # no temp files left


def test_a_failing_write_leaves_the_old_file(store: MemoryStore, memdir: Path) -> None:
    store.add("memory", "old entry")
    before = disk(memdir)
    with python(FAILING_ADD, memdir, stdout=subprocess.PIPE) as child:
        out, _ = child.communicate(timeout=30)
    assert child.returncode == 3 and out == "EFBIG\n"  # the write really failed midway
    assert disk(memdir) == before  # old content kept, temp file removed
    assert store.entries("memory") == ["old entry"]


def test_read_verified(tmp_path: Path) -> None:
    assert read_verified(tmp_path / "missing") is None
    (tmp_path / "ok").write_text("§ fine")
    assert read_verified(tmp_path / "ok") == "§ fine"
