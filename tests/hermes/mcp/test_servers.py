"""MCP servers as supervised actors, against real servers (``mcp_server.py``): stdio, HTTP."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from actors import ActorSystem
from hermes.mcp.link import ServerLink
from hermes.mcp.probe import probe
from hermes.mcp.server import SetEnabled
from hermes.tools import (
    ApprovalChoice,
    ApprovalRequest,
    CallStatus,
    ToolCall,
    ToolContext,
    ToolProgress,
    ToolRegistry,
    plan_batch,
    run_batch,
)

from .conftest import SERVER, StartMcp, mcp_config, ready, stdio, wait_until


async def call(
    registry: ToolRegistry, tmp_path: Path, name: str, args: dict[str, object] | None = None
) -> tuple[str, bool, CallStatus]:
    """One call through the real batch runner: (text, is_error, status)."""
    ctx = ToolContext.create(tmp_path, tmp_path / "spill")
    [result] = await run_batch([ToolCall("toolu_1", name, args or {})], registry, ctx)
    return result.outcome.content, result.outcome.is_error, result.status


def file_bytes(path: str) -> bytes:
    return Path(path).read_bytes()


def server_pids(link: ServerLink) -> list[int]:
    """Live (non-zombie) members of the process group of the link's latest server (/proc)."""
    pgid = link.last_pid
    assert pgid is not None, "no server process was ever started"
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


async def test_tools_are_listed_namespaced_with_the_servers_schema(
    start_mcp: StartMcp, tmp_path: Path
) -> None:
    mcp = await start_mcp({"files": stdio()})
    link = mcp.link("files")
    await wait_until(link, ready)
    names = mcp.registry.names()
    assert "mcp_files_echo" in names and "mcp_files_hang" in names
    echo = mcp.registry.get("mcp_files_echo")
    assert echo is not None
    spec = echo.spec()
    assert spec.input_schema["properties"]["text"]["type"] == "string"
    assert spec.input_schema["required"] == ["text"]
    assert spec.description.startswith("[MCP server files] Answer the text")
    assert link.server_name == "test-server"
    text, is_error, status = await call(mcp.registry, tmp_path, "mcp_files_echo", {"text": "hi"})
    assert (text, is_error, status) == ("echo: hi", False, CallStatus.OK)


async def test_the_server_gets_only_the_listed_environment(
    start_mcp: StartMcp, tmp_path: Path
) -> None:
    environ = {"HOME": "/home/someone", "SECRET_TOKEN": "s3cret", "PATH": os.environ["PATH"]}
    mcp = await start_mcp(
        {"env": stdio(env={"GREETING": "hello", "TOKEN": "Bearer ${SECRET_TOKEN}"})},
        environ=environ,
    )
    await wait_until(mcp.link("env"), ready)

    async def getenv(name: str) -> str:
        text, _, _ = await call(mcp.registry, tmp_path, "mcp_env_getenv", {"name": name})
        return text

    assert await getenv("GREETING") == "hello"
    assert await getenv("TOKEN") == "Bearer s3cret"  # ${NAME} taken from the daemon's env
    assert await getenv("HOME") == "<unset>"
    assert await getenv("PATH") == "<unset>"
    assert await getenv("SECRET_TOKEN") == "<unset>"


async def test_include_and_exclude_choose_the_tools(start_mcp: StartMcp) -> None:
    mcp = await start_mcp(
        {
            "some": stdio(tools={"include": ["echo", "fail", "nonexistent"]}),
            "most": stdio(tools={"exclude": ["crash", "hang"]}),
        }
    )
    await wait_until(mcp.link("some"), ready)
    await wait_until(mcp.link("most"), ready)
    names = set(mcp.registry.names())
    assert {n for n in names if n.startswith("mcp_some_")} == {"mcp_some_echo", "mcp_some_fail"}
    most = {n for n in names if n.startswith("mcp_most_")}
    assert "mcp_most_echo" in most and "mcp_most_big" in most
    assert "mcp_most_crash" not in most and "mcp_most_hang" not in most


async def test_results_errors_images_and_large_results(start_mcp: StartMcp, tmp_path: Path) -> None:
    mcp = await start_mcp({"t": stdio()})
    await wait_until(mcp.link("t"), ready)
    text, is_error, status = await call(mcp.registry, tmp_path, "mcp_t_fail", {"why": "no disk"})
    assert is_error and status is CallStatus.ERROR
    assert "failed because no disk" in text

    text, is_error, _ = await call(mcp.registry, tmp_path, "mcp_t_picture")
    assert not is_error
    first, second = text.split("\n")
    assert first == "here it is"
    match = re.fullmatch(r"\[image \(image/png, (\d+) bytes\) saved to (\S+)\]", second)
    assert match is not None
    assert file_bytes(match.group(2)).startswith(b"\x89PNG")

    # Over 50,000 characters (MCP's threshold, below the built-in tools' 100,000): spilled.
    text, is_error, _ = await call(mcp.registry, tmp_path, "mcp_t_big", {"size": 60_000})
    assert not is_error and len(text) < 5_000
    assert "60,000 characters" in text
    saved = re.search(r"saved to (\S+) ;", text)
    assert saved is not None and len(file_bytes(saved.group(1))) == 60_000
    text, _, _ = await call(mcp.registry, tmp_path, "mcp_t_big", {"size": 40_000})
    assert len(text) == 40_000


async def test_a_10_mb_result_arrives_and_is_spilled(start_mcp: StartMcp, tmp_path: Path) -> None:
    mcp = await start_mcp({"t": stdio()})
    await wait_until(mcp.link("t"), ready)
    with trio.fail_after(60):
        text, is_error, _ = await call(mcp.registry, tmp_path, "mcp_t_big", {"size": 10_000_000})
    assert not is_error and "10,000,000 characters" in text
    assert mcp.link("t").state == "ready"


async def test_a_crashed_server_is_restarted_and_meanwhile_answers_unavailable(
    start_mcp: StartMcp, tmp_path: Path
) -> None:
    state = tmp_path / "starts"
    mcp = await start_mcp({"flaky": stdio(args=[SERVER, "--state", str(state)]), "steady": stdio()})
    flaky, steady = mcp.link("flaky"), mcp.link("steady")
    await wait_until(flaky, ready)
    await wait_until(steady, ready)
    first = server_pids(flaky)
    assert first == [flaky.pid]

    text, is_error, _ = await call(mcp.registry, tmp_path, "mcp_flaky_crash")
    assert is_error
    assert "closed the connection during the call to crash" in text
    await wait_until(flaky, lambda link: link.state == "down")
    assert "exited with code 3" in flaky.reason and "crashing on purpose" in flaky.reason

    # Down: its tools are still offered and answer at once, saying when it retries.
    assert "mcp_flaky_echo" in mcp.registry.names()
    text, is_error, _ = await call(mcp.registry, tmp_path, "mcp_flaky_echo", {"text": "x"})
    assert is_error
    assert re.fullmatch(
        r"MCP server 'flaky' is unavailable \(the server exited with code 3; stderr: "
        r"crashing on purpose\)(, retrying in \d+ s| ?; reconnecting now)\.",
        text,
    ), text
    # The other server never noticed.
    assert steady.state == "ready" and steady.connects == 1
    assert (await call(mcp.registry, tmp_path, "mcp_steady_echo", {"text": "y"}))[0] == "echo: y"

    await wait_until(flaky, lambda link: link.state == "ready" and link.connects == 2)
    text, _, _ = await call(mcp.registry, tmp_path, "mcp_flaky_starts")
    assert text == "2"
    assert server_pids(flaky) == [flaky.pid] and flaky.pid not in first


async def test_a_server_that_never_starts_does_not_affect_the_others(
    start_mcp: StartMcp, tmp_path: Path
) -> None:
    mcp = await start_mcp(
        {
            "broken": stdio(args=[SERVER, "--exit-at-start", "2"]),
            "missing": {"command": "no-such-mcp-server-binary"},
            "good": stdio(),
        }
    )
    await wait_until(mcp.link("good"), ready)
    broken, missing = mcp.link("broken"), mcp.link("missing")
    await wait_until(broken, lambda link: link.state == "down")
    await wait_until(missing, lambda link: link.state == "down")
    assert broken.reason == (
        "the server exited with code 2; stderr: cannot start: no configuration"
    )
    assert missing.reason == "command 'no-such-mcp-server-binary' not found on the daemon's PATH"
    assert not any(n.startswith(("mcp_broken_", "mcp_missing_")) for n in mcp.registry.names())
    # It keeps retrying (with backoff) without its actor or the supervisor failing.
    attempts = broken.attempts
    await wait_until(broken, lambda link: link.attempts > attempts, timeout=30)
    assert mcp.ref.is_alive
    text, _, _ = await call(mcp.registry, tmp_path, "mcp_good_echo", {"text": "fine"})
    assert text == "echo: fine"


async def test_list_changed_refreshes_the_tools(start_mcp: StartMcp, tmp_path: Path) -> None:
    mcp = await start_mcp({"dyn": stdio()})
    link = mcp.link("dyn")
    await wait_until(link, ready)
    assert "mcp_dyn_late" not in mcp.registry.names()
    text, _, _ = await call(mcp.registry, tmp_path, "mcp_dyn_add_tool")
    assert text == "added"
    await wait_until(link, lambda link: "late" in link.tools)
    assert "mcp_dyn_late" in mcp.registry.names()
    text, _, _ = await call(mcp.registry, tmp_path, "mcp_dyn_late")
    assert text == "late tool ran"


async def test_stopping_kills_and_reaps_the_server_process_group(
    start_mcp: StartMcp, tmp_path: Path
) -> None:
    mcp = await start_mcp({"t": stdio()})
    link = mcp.link("t")
    await wait_until(link, ready)
    pids = server_pids(link)
    assert len(pids) == 1
    with trio.fail_after(15):
        await mcp.ref.stop()
    assert link.state == "stopped"
    assert server_pids(link) == []
    text, is_error, _ = await call(mcp.registry, tmp_path, "mcp_t_echo", {"text": "x"})
    assert is_error and text == "MCP server 't' is unavailable (stopped)."


async def start_http_server(mode: str = "--http") -> tuple[trio.Process, str]:
    """The test server over HTTP on 127.0.0.1 (a real subprocess) and its URL."""
    process = await trio.lowlevel.open_process(
        [sys.executable, SERVER, mode], stdout=subprocess.PIPE, start_new_session=True
    )
    assert process.stdout is not None
    with trio.fail_after(30):
        data = b""
        while not data.endswith(b"\n"):
            chunk = await process.stdout.receive_some(100)
            if not chunk:
                process.kill()
                raise AssertionError("the HTTP server exited before printing its port")
            data += chunk
    path = "/sse" if mode == "--sse" else "/mcp"
    return process, f"http://127.0.0.1:{int(data)}{path}"


@pytest.fixture
async def http_server() -> AsyncIterator[str]:
    process, url = await start_http_server()
    try:
        yield url
    finally:
        process.kill()
        with trio.CancelScope(shield=True):
            await process.wait()


async def test_a_streamable_http_server_is_listed_and_called(
    start_mcp: StartMcp, http_server: str, tmp_path: Path
) -> None:
    mcp = await start_mcp(
        {"web": {"url": http_server, "headers": {"Authorization": "Bearer ${WEB_TOKEN}"}}},
        environ={"WEB_TOKEN": "t0k"},
    )
    link = mcp.link("web")
    await wait_until(link, ready)
    assert link.config.transport == "http"
    text, is_error, _ = await call(mcp.registry, tmp_path, "mcp_web_echo", {"text": "over http"})
    assert (text, is_error) == ("echo: over http", False)


async def test_an_http_header_naming_an_unset_variable_keeps_only_that_server_down(
    start_mcp: StartMcp, http_server: str
) -> None:
    mcp = await start_mcp(
        {"web": {"url": http_server, "headers": {"Authorization": "Bearer ${NOT_SET_ANYWHERE}"}}},
        environ={},
    )
    link = mcp.link("web")
    await wait_until(link, lambda link: link.state == "down")
    assert link.reason == (
        "header Authorization names ${NOT_SET_ANYWHERE}, which is not set in the daemon's "
        "environment"
    )


async def test_a_server_that_never_answers_initialize_times_out_and_is_killed(
    start_mcp: StartMcp,
) -> None:
    mcp = await start_mcp({"mute": stdio(args=[SERVER, "--hang-at-start"], connect_timeout=1)})
    link = mcp.link("mute")
    await wait_until(link, lambda link: link.state == "down")
    assert link.reason == (
        "it did not start, initialize and list its tools within connect_timeout (1 s)"
    )
    assert server_pids(link) == []  # the hung process was killed and reaped


async def test_a_line_that_is_not_json_rpc_does_not_break_the_connection(
    start_mcp: StartMcp, tmp_path: Path
) -> None:
    mcp = await start_mcp({"noisy": stdio()})
    link = mcp.link("noisy")
    await wait_until(link, ready)
    text, is_error, _ = await call(mcp.registry, tmp_path, "mcp_noisy_garbage")
    assert (text, is_error) == ("after garbage", False)
    text, _, _ = await call(mcp.registry, tmp_path, "mcp_noisy_echo", {"text": "still"})
    assert text == "echo: still"
    assert link.state == "ready" and link.connects == 1


async def test_only_a_server_that_opted_in_runs_its_calls_in_parallel(
    start_mcp: StartMcp, tmp_path: Path
) -> None:
    mcp = await start_mcp({"par": stdio(parallel=True), "seq": stdio()})
    await wait_until(mcp.link("par"), ready)
    await wait_until(mcp.link("seq"), ready)

    def stages(server: str) -> list[list[str]]:
        calls = [ToolCall(f"toolu_{i}", f"mcp_{server}_echo", {"text": str(i)}) for i in range(3)]
        plan = plan_batch(calls, mcp.registry, tmp_path)
        return [[calls[i].id for i in stage] for stage in plan.stages]

    assert stages("par") == [["toolu_0", "toolu_1", "toolu_2"]]
    assert stages("seq") == [["toolu_0"], ["toolu_1"], ["toolu_2"]]


async def test_an_http_server_that_goes_away_is_noticed_and_retried(
    start_mcp: StartMcp, tmp_path: Path
) -> None:
    process, url = await start_http_server()
    try:
        mcp = await start_mcp({"web": {"url": url}})
        link = mcp.link("web")
        await wait_until(link, ready)
    finally:
        process.kill()
        with trio.CancelScope(shield=True):
            await process.wait()
    await wait_until(link, lambda link: link.state == "down")  # the next ping fails
    text, is_error, _ = await call(mcp.registry, tmp_path, "mcp_web_echo", {"text": "x"})
    assert is_error and text.startswith("MCP server 'web' is unavailable (")
    assert "retrying in" in text or "reconnecting now" in text


async def test_an_untrusted_servers_write_capable_tools_need_approval(
    start_mcp: StartMcp, tmp_path: Path
) -> None:
    mcp = await start_mcp({"u": stdio(trust="untrusted"), "t": stdio()})
    await wait_until(mcp.link("u"), ready)
    await wait_until(mcp.link("t"), ready)
    asked: list[ApprovalRequest] = []
    answer = ApprovalChoice.DENY

    async def ask(request: ApprovalRequest) -> ApprovalChoice:
        asked.append(request)
        return answer

    async def run(name: str, args: dict[str, object], **ctx_args: object) -> tuple[str, bool]:
        ctx = ToolContext.create(tmp_path, tmp_path / "spill", **ctx_args)
        [result] = await run_batch([ToolCall("toolu_1", name, args)], mcp.registry, ctx)
        return result.outcome.content, result.outcome.is_error

    # readOnlyHint=true: no question asked, even unattended.
    assert await run("mcp_u_echo", {"text": "ro"}) == ("echo: ro", False)
    # Not marked read-only, nobody attached: refused, nothing sent to the server.
    text, is_error = await run("mcp_u_getenv", {"name": "HOME"})
    assert is_error and text.startswith("Call to mcp_u_getenv NOT made: it needs approval")
    assert "getenv of untrusted MCP server 'u' is not marked read-only" in text
    # A person denies, then approves once; they see the call and its arguments.
    text, is_error = await run("mcp_u_getenv", {"name": "HOME"}, ask_approval=ask)
    assert is_error and "the user denied approval" in text
    assert asked[-1].command == 'mcp_u_getenv {"name": "HOME"}'
    answer = ApprovalChoice.ONCE
    assert await run("mcp_u_getenv", {"name": "HOME"}, ask_approval=ask) == ("<unset>", False)
    # A trusted server's tools never ask.
    assert await run("mcp_t_getenv", {"name": "HOME"}) == ("<unset>", False)
    assert len(asked) == 2


async def test_elicitation_unattended_is_declined_and_progress_is_reported(
    start_mcp: StartMcp, tmp_path: Path
) -> None:
    mcp = await start_mcp({"t": stdio()})
    await wait_until(mcp.link("t"), ready)
    assert (await call(mcp.registry, tmp_path, "mcp_t_ask"))[0] == "elicitation: decline"
    seen: list[ToolProgress] = []
    ctx = ToolContext.create(tmp_path, tmp_path / "spill", progress=seen.append)
    [result] = await run_batch([ToolCall("toolu_p", "mcp_t_steps", {})], mcp.registry, ctx)
    assert result.outcome.content == "stepped"
    outputs = [(p.call_id, p.text) for p in seen if p.kind == "output"]
    assert outputs == [("toolu_p", f"{n}/3 step {n}") for n in (1, 2, 3)]


async def test_a_server_is_disabled_and_enabled_at_run_time(
    system: ActorSystem, start_mcp: StartMcp, tmp_path: Path
) -> None:
    mcp = await start_mcp({"t": stdio(), "other": stdio()})
    link = mcp.link("t")
    await wait_until(link, ready)
    await wait_until(mcp.link("other"), ready)
    ref = system.lookup(f"{mcp.ref.path}/t")
    assert ref is not None
    with trio.fail_after(30):
        row = await ref.call(SetEnabled(False))
    assert row["state"] == "disabled" and row["tools"] == []
    assert server_pids(link) == []  # its process was stopped and reaped
    assert not any(n.startswith("mcp_t_") for n in mcp.registry.names())
    assert "mcp_other_echo" in mcp.registry.names()  # the other server is untouched
    assert mcp.link("other").connects == 1

    with trio.fail_after(30):
        row = await ref.call(SetEnabled(True))
    assert row["state"] in ("starting", "ready")
    await wait_until(link, ready)
    assert link.connects == 2
    text, _, _ = await call(mcp.registry, tmp_path, "mcp_t_echo", {"text": "back"})
    assert text == "echo: back"


async def test_tools_the_model_api_would_refuse_are_skipped_and_names_are_made_safe(
    start_mcp: StartMcp,
) -> None:
    mcp = await start_mcp({"t": stdio(args=[SERVER, "--odd-tools"])})
    link = mcp.link("t")
    await wait_until(link, ready)
    names = mcp.registry.names()
    assert "mcp_t_dotted_name" in names  # '.' is not allowed in a tool name
    assert not any(n.startswith(("mcp_t_top", "mcp_t_broken")) for n in names)
    assert link.skipped == (
        "top.any: its input schema uses anyOf at the top level",
        "broken: its input schema is not valid JSON Schema ('nope' is not valid under any of "
        "the given schemas)",
    )
    assert "echo" in link.tools and "dotted.name" in link.tools


async def test_a_server_that_only_speaks_legacy_sse_is_reached_over_sse(
    start_mcp: StartMcp, tmp_path: Path
) -> None:
    process, url = await start_http_server("--sse")
    try:
        mcp = await start_mcp(
            {
                "old": {"url": url, "connect_timeout": 10},
                "pinned": {"url": url, "transport": "sse"},
            }
        )
        old, pinned = mcp.link("old"), mcp.link("pinned")
        await wait_until(old, ready)
        await wait_until(pinned, ready)
        assert old.connects == pinned.connects == 1
        for server in ("old", "pinned"):
            text, is_error, _ = await call(
                mcp.registry, tmp_path, f"mcp_{server}_echo", {"text": "sse"}
            )
            assert (text, is_error) == ("echo: sse", False)
    finally:
        process.kill()
        with trio.CancelScope(shield=True):
            await process.wait()


async def test_an_elicitation_is_put_to_the_person_of_the_calling_session(
    start_mcp: StartMcp, tmp_path: Path
) -> None:
    mcp = await start_mcp({"t": stdio()})
    await wait_until(mcp.link("t"), ready)
    asked: list[ApprovalRequest] = []
    answers = [ApprovalChoice.ONCE, ApprovalChoice.DENY]

    async def ask(request: ApprovalRequest) -> ApprovalChoice:
        asked.append(request)
        return answers[len(asked) - 1]

    async def confirm() -> str:
        ctx = ToolContext.create(tmp_path, tmp_path / "spill", ask_approval=ask)
        [result] = await run_batch([ToolCall("toolu_c", "mcp_t_confirm", {})], mcp.registry, ctx)
        return result.outcome.content

    assert await confirm() == "elicitation: accept"
    assert asked[0].command == "MCP server 't' asks during mcp_t_confirm: Delete the draft?"
    assert await confirm() == "elicitation: decline"
    assert len(asked) == 2  # asked each time, never remembered
    # Unattended: declined without asking.
    assert (await call(mcp.registry, tmp_path, "mcp_t_confirm"))[0] == "elicitation: decline"
    assert len(asked) == 2


async def test_a_probe_opens_a_fresh_connection_and_times_it(tmp_path: Path) -> None:
    [ok] = mcp_config({"t": stdio()}).servers
    answer = await probe(ok, environ={})
    assert answer["ok"] and answer["transport"] == "stdio"
    assert answer["server"] == "test-server 1.0" and answer["listed"] >= 10
    assert answer["connect_ms"] > 0 and answer["list_ms"] > 0 and answer["ping_ms"] > 0
    hung = stdio(args=[SERVER, "--hang-at-start"], connect_timeout=1)
    [mute] = mcp_config({"m": hung}).servers
    answer = await probe(mute, environ={})
    assert answer == {
        "ok": False,
        "transport": "stdio",
        "reason": "no answer to initialize within 1 s",
    }
    process, url = await start_http_server("--sse")
    try:
        [old] = mcp_config({"o": {"url": url, "connect_timeout": 10}}).servers
        answer = await probe(old)
    finally:
        process.kill()
        with trio.CancelScope(shield=True):
            await process.wait()
    assert answer["ok"] and answer["transport"] == "sse"
