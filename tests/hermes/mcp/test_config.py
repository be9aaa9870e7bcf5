"""``[mcp.servers.NAME]`` through the daemon's config loader: parsed, or refused precisely."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes.daemon.config import ConfigError, load_config, reload_changes
from hermes.mcp.config import SamplingConfig


def load(tmp_path: Path, text: str) -> object:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load_config(path, env={})


def test_servers_are_parsed_with_their_defaults(tmp_path: Path) -> None:
    config = load_config(None, env={})
    assert config.mcp.servers == ()
    path = tmp_path / "config.toml"
    path.write_text(
        "[mcp.servers.github]\n"
        "command = 'npx'\nargs = ['-y', '@modelcontextprotocol/server-github']\n"
        "env = { GITHUB_TOKEN = '${GITHUB_TOKEN}', PATH = '${PATH}' }\n"
        "tools = { exclude = ['delete_repo'] }\n"
        "timeout = 30\nparallel = true\n"
        "sampling = { max_rpm = 3, allowed_models = ['claude-haiku'] }\n"
        "[mcp.servers.docs]\n"
        "url = 'https://mcp.example.com/mcp'\n"
        "headers = { Authorization = 'Bearer ${DOCS_TOKEN}' }\n"
        "trust = 'untrusted'\nconnect_timeout = 5.5\n"
        "[mcp.servers.off]\ncommand = 'x'\nenabled = false\n"
    )
    config = load_config(path, env={})
    github, docs, off = config.mcp.servers
    assert not off.enabled
    assert (github.name, github.transport, github.command) == ("github", "stdio", "npx")
    assert github.args == ("-y", "@modelcontextprotocol/server-github")
    assert dict(github.env) == {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "PATH": "${PATH}"}
    assert github.exclude == ("delete_repo",) and github.include is None
    assert github.offers("create_issue") and not github.offers("delete_repo")
    assert (github.sampling.max_rpm, github.sampling.allowed_models) == (3, ("claude-haiku",))
    assert (github.sampling.enabled, github.sampling.max_tokens_cap) == (True, 4096)
    assert docs.sampling == SamplingConfig()
    assert (github.timeout, github.connect_timeout, github.trust, github.parallel) == (
        30.0,
        60.0,
        "trusted",
        True,
    )
    assert (docs.transport, docs.url, docs.trust, docs.connect_timeout) == (
        "http",
        "https://mcp.example.com/mcp",
        "untrusted",
        5.5,
    )
    assert dict(docs.headers) == {"Authorization": "Bearer ${DOCS_TOKEN}"}
    assert [s.name for s in config.mcp.enabled] == ["github", "docs"]
    # A changed [mcp] needs a restart; an unchanged one is no change.
    assert reload_changes(config, load_config(path, env={})) == ([], [])
    assert reload_changes(config, load_config(None, env={})) == ([], ["[mcp]"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[mcp.servers.gh]\ncommand = 'x'\ncomand = 'y'\n",
            "[mcp.servers.gh] comand: unknown key (known: command, args, env, cwd, url, headers, "
            "transport, enabled, tools, timeout, connect_timeout, trust, parallel, sampling, "
            "auth, oauth)",
        ),
        (
            "[mcp.servers.gh]\nurl = 'http://h/mcp'\nauth = 'basic'\n",
            "[mcp.servers.gh] auth: expected one of none, oauth, got string 'basic'",
        ),
        (
            "[mcp.servers.gh]\ncommand = 'x'\nauth = 'oauth'\n",
            "[mcp.servers.gh] auth: only for an HTTP server (this one has command)",
        ),
        (
            "[mcp.servers.gh]\nurl = 'http://h/mcp'\noauth = { scope = 'a' }\n",
            '[mcp.servers.gh] oauth: only with auth = "oauth"',
        ),
        (
            "[mcp.servers.gh]\nurl = 'http://h/mcp'\nauth = 'oauth'\ntransport = 'sse'\n",
            '[mcp.servers.gh] auth: "oauth" needs streamable HTTP (not transport = "sse")',
        ),
        (
            "[mcp.servers.gh]\nurl = 'http://h/mcp'\nauth = 'oauth'\n"
            "oauth = { redirect_port = 70000, client = 'x' }\n",
            "[mcp.servers.gh] oauth.redirect_port: expected a port number 0-65535, "
            "got integer 70000",
        ),
        (
            "[mcp.servers.gh]\nurl = 'http://h/mcp'\nauth = 'oauth'\noauth = { client = 'x' }\n",
            "[mcp.servers.gh] oauth.client: unknown key (known: scope, client_name, redirect_port)",
        ),
        (
            "[mcp.servers.gh]\nurl = 'http://h/mcp'\ntransport = 'ws'\n",
            "[mcp.servers.gh] transport: expected one of auto, streamable_http, sse, "
            "got string 'ws'",
        ),
        (
            "[mcp.servers.gh]\ncommand = 'x'\ntransport = 'sse'\n",
            "[mcp.servers.gh] transport: only for an HTTP server (this one has command)",
        ),
        (
            "[mcp.servers.gh]\ncommand = 'x'\nsampling = { max_rpm = 0 }\n",
            "[mcp.servers.gh] sampling.max_rpm: expected an integer >= 1, got integer 0",
        ),
        (
            "[mcp.servers.gh]\ncommand = 'x'\nsampling = { rpm = 5 }\n",
            "[mcp.servers.gh] sampling.rpm: unknown key (known: enabled, max_rpm, "
            "allowed_models, max_tokens_cap)",
        ),
        (
            "[mcp.servers.gh]\ncommand = 'x'\ntimeout = 'soon'\n",
            "[mcp.servers.gh] timeout: expected a number of seconds > 0 and <= 86400, "
            "got string 'soon'",
        ),
        (
            "[mcp.servers.gh]\ncommand = 'x'\ntimeout = 0\n",
            "[mcp.servers.gh] timeout: expected a number of seconds > 0 and <= 86400, "
            "got integer 0",
        ),
        (
            "[mcp.servers.gh]\ncommand = 'x'\ntrust = 'full'\n",
            "[mcp.servers.gh] trust: expected one of trusted, untrusted, got string 'full'",
        ),
        (
            "[mcp.servers.gh]\ncommand = 'x'\nargs = 'a b'\n",
            "[mcp.servers.gh] args: expected an array of strings, got string 'a b'",
        ),
        (
            "[mcp.servers.gh]\ncommand = 'x'\nenv = { 'BAD NAME' = 'v' }\n",
            '[mcp.servers.gh] env: expected a table of NAME = "value"',
        ),
        (
            "[mcp.servers.gh]\ncommand = 'x'\ntools = { only = ['a'] }\n",
            "[mcp.servers.gh] tools.only: unknown key (known: include, exclude)",
        ),
        (
            "[mcp.servers.gh]\ncommand = 'x'\ntools = { include = 'a' }\n",
            "[mcp.servers.gh] tools.include: expected an array of tool names, got string 'a'",
        ),
        (
            "[mcp.servers.gh]\ncommand = 'x'\nurl = 'http://h/mcp'\n",
            "[mcp.servers.gh]: give either command (stdio) or url (HTTP), not both",
        ),
        (
            "[mcp.servers.gh]\nargs = ['x']\n",
            "[mcp.servers.gh]: missing command (a stdio server) or url (an HTTP server)",
        ),
        (
            "[mcp.servers.gh]\nurl = 'ftp://h/mcp'\n",
            "[mcp.servers.gh] url: expected an http:// or https:// URL, got string 'ftp://h/mcp'",
        ),
        (
            "[mcp.servers.gh]\nurl = 'http://h/mcp'\nenv = { A = 'b' }\n",
            "[mcp.servers.gh] env: only for a stdio server (this one has url)",
        ),
        (
            "[mcp.servers.gh]\ncommand = 'x'\nheaders = { A = 'b' }\n",
            "[mcp.servers.gh] headers: only for an HTTP server (this one has command)",
        ),
        (
            "[mcp.servers.'my.server']\ncommand = 'x'\n",
            "[mcp.servers.my.server]: invalid server name 'my.server'",
        ),
        ("[mcp]\nserver = {}\n", "[mcp] server: unknown key (known: servers, osv_check, osv_url)"),
        (
            "[mcp]\nosv_check = 1\n",
            "[mcp] osv_check: expected a boolean (true or false), got integer 1",
        ),
        ("[mcp]\nservers = 3\n", "[mcp] servers: expected a table, got integer 3"),
        ("mcp = 'on'\n", "[mcp]: expected a table, got string 'on'"),
    ],
)
def test_bad_keys_and_values_are_refused_naming_the_file_and_key(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    assert f"{tmp_path / 'config.toml'}: {message}" in str(caught.value)


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load(
            tmp_path,
            "[model]\nmax_tokens = 'x'\n"
            "[mcp.servers.a]\ncommand = 'x'\ntimeout = -1\n"
            "[mcp.servers.b]\nurl = 'http://h'\nparallel = 'yes'\n",
        )
    lines = str(caught.value).splitlines()
    assert len(lines) == 3
    assert "[model] max_tokens" in lines[0]
    assert "[mcp.servers.a] timeout" in lines[1]
    assert (
        "[mcp.servers.b] parallel: expected a boolean (true or false), got string 'yes'"
        in (lines[2])
    )
