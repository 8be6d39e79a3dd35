"""Rule families read real outputs: every observation here comes from running the real
command (shell, Python, pytest, git, rm, kill, make, an HTTP server) in a temp dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from aw_lookahead.lookahead import Outcome, RuleJudge, Verdict
from aw_lookahead.lookahead.rules import rule_signals
from aw_lookahead.trajectory import Trajectory
from aw_lookahead.worldmodel import Prediction

TERM = Trajectory(domain="terminal")


def sh(cmd: str, cwd: Path) -> str:
    """Run ``cmd`` in bash and return stdout+stderr as a terminal would show them."""
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd), "LC_ALL": "C"}
    done = subprocess.run(
        ["bash", "-c", cmd],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    return done.stdout + done.stderr


def names(observation: str, trajectory: Trajectory = TERM) -> set[str]:
    return {s.name for s in rule_signals(trajectory, "x", observation)}


def test_command_not_found(tmp_path: Path) -> None:
    out = sh("definitely_not_a_command_xyz --help", tmp_path)
    [sig] = [s for s in rule_signals(TERM, "x", out) if s.name == "shell.command_not_found"]
    assert sig.outcome is Outcome.FAILURE
    assert "definitely_not_a_command_xyz" in (sig.matched or "")


def test_missing_file_and_permission_denied(tmp_path: Path) -> None:
    assert "shell.no_such_file" in names(sh("cat missing.txt", tmp_path))
    out = sh("echo hi > file.txt && ./file.txt", tmp_path)
    assert "Permission denied" in out
    assert "shell.permission_denied" in names(out)


def test_a_program_reporting_an_error_in_its_own_name_is_a_failure(tmp_path: Path) -> None:
    """Real output of the ``prog: message`` form, from commands the action runs."""
    (tmp_path / "app.conf").write_text("region=oak\n")
    (tmp_path / "f.txt").write_text("a line\n")
    failing = ["sed -i 's/oak/elm' app.conf", "sort --bogus f.txt", "tar -tzf f.txt | head -1"]
    for cmd in failing:
        out = sh(cmd, tmp_path)
        assert any(
            s.name == "shell.program_error" or s.outcome is Outcome.FAILURE
            for s in rule_signals(TERM, cmd, out)
        ), (cmd, out)
    sed = sh(failing[0], tmp_path)
    [sig] = rule_signals(TERM, failing[0], sed)
    assert sig.name == "shell.program_error"
    assert (sig.matched or "").startswith("sed: -e expression")
    fine = ["grep -H line f.txt", "echo 'sed: not an error'", "wc -l f.txt", "cat f.txt"]
    for cmd in fine:
        out = sh(cmd, tmp_path)
        assert not [s for s in rule_signals(TERM, cmd, out) if s.outcome is Outcome.FAILURE], out
    warned = "$ tar -czf b.tgz /etc/hostname\ntar: Removing leading `/' from member names\n"
    assert not rule_signals(TERM, "tar -czf b.tgz /etc/hostname", warned)


def test_nonzero_exit_hints(tmp_path: Path) -> None:
    out = sh(
        f"{sys.executable} -c \"import subprocess; subprocess.run(['false'], check=True)\"",
        tmp_path,
    )
    assert {"shell.nonzero_exit", "python.traceback"} <= names(out)
    (tmp_path / "Makefile").write_text("all:\n\tfalse\n")
    assert "shell.nonzero_exit" in names(sh("make", tmp_path))


def test_python_traceback_and_syntax_error(tmp_path: Path) -> None:
    assert "python.traceback" in names(sh(f"{sys.executable} -c '1/0'", tmp_path))
    (tmp_path / "bad.py").write_text("def f(:\n    pass\n")
    found = names(sh(f"{sys.executable} bad.py", tmp_path))
    assert "python.syntax_error" in found


def test_pytest_failure_and_pass(tmp_path: Path) -> None:
    (tmp_path / "test_a.py").write_text(
        "def test_ok():\n    assert 1\n\ndef test_bad():\n    assert 1 == 2\n"
    )
    cmd = (
        f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q -p no:cacheprovider "
        "-o addopts= test_a.py"
    )
    failing = sh(cmd, tmp_path)
    assert {"swe.tests_failed", "swe.test_failed"} <= names(failing)
    assert "swe.tests_passed" not in names(failing)
    (tmp_path / "test_a.py").write_text("def test_ok():\n    assert 1\n")
    passing = sh(cmd.replace("-q ", ""), tmp_path)
    verdict_signals = rule_signals(TERM, "pytest", passing)
    assert [s.name for s in verdict_signals] == ["swe.tests_passed"]


def test_git_errors_force_push_and_git_rm(tmp_path: Path) -> None:
    git = "git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main"
    sh(f"git init -q --bare remote.git && {git} init -q work", tmp_path)
    work = tmp_path / "work"
    sh(
        f"echo a > a.txt && {git} add a.txt && {git} commit -qm one && "
        f"git remote add origin ../remote.git && git push -q origin main",
        work,
    )
    pushed = sh(f"{git} commit -q --amend -m two && git push --force origin main", work)
    assert "forced update" in pushed
    assert "risk.force_push" in names(pushed)
    removed = sh(f"{git} rm a.txt", work)
    assert removed.strip() == "rm 'a.txt'"
    assert "risk.deleted" in names(removed)
    assert "git.fatal" in names(sh("git log", tmp_path / "remote.git" / "hooks"))
    assert "tool.error_line" in names(sh("git checkout no-such-branch", work))


def test_rm_and_kill(tmp_path: Path) -> None:
    out = sh("touch a.txt && mkdir d && rm -v a.txt && rm -rv d", tmp_path)
    sigs = [s for s in rule_signals(TERM, "rm", out) if s.name == "risk.deleted"]
    assert sigs
    assert sigs[0].outcome is Outcome.RISKY
    assert "a.txt" in (sigs[0].matched or "")
    killed = sh("sleep 100 & kill -9 $!; wait $!", tmp_path)
    assert "Killed" in killed
    assert "risk.killed" in names(killed)
    assert "process.no_such_process" in names(sh("kill 999999", tmp_path))


class _Handler(BaseHTTPRequestHandler):
    ROUTES: ClassVar[dict[str, tuple[int, object]]] = {
        "/missing": (404, {"error": {"code": 404, "message": "no such repository"}}),
        "/boom": (500, {"status": 500, "detail": "internal failure"}),
        "/rpc": (
            200,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "error": {"code": -32602, "message": "Unknown tool: frobnicate"},
            },
        ),
        "/tool-error": (200, {"content": [{"type": "text", "text": "disk full"}], "isError": True}),
        "/tool-ok": (200, {"content": [{"type": "text", "text": "3 rows"}], "isError": False}),
        "/search": (200, {"query": "zzqqx", "results": []}),
    }

    def do_GET(self) -> None:
        status, body = self.ROUTES[self.path]
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_mcp_and_http_errors(tmp_path: Path, http_url: str) -> None:
    mcp = Trajectory(domain="mcp")
    with_status = sh(f"curl -s -i {http_url}/missing", tmp_path)
    assert {"http.error_status"} <= names(with_status, mcp)
    assert "mcp.error_object" in names(sh(f"curl -s {http_url}/missing", tmp_path), mcp)
    assert "http.error_status" in names(sh(f"curl -s {http_url}/boom", tmp_path), mcp)
    assert "mcp.error_object" in names(sh(f"curl -s {http_url}/rpc", tmp_path), mcp)
    assert "mcp.is_error" in names(sh(f"curl -s {http_url}/tool-error", tmp_path), mcp)
    ok = rule_signals(mcp, "x", sh(f"curl -s {http_url}/tool-ok", tmp_path))
    assert [(s.name, s.outcome) for s in ok] == [("mcp.ok", Outcome.SUCCESS)]


def test_search_without_results(tmp_path: Path, http_url: str) -> None:
    search = Trajectory(domain="search")
    assert "search.no_results" in names(sh(f"curl -s {http_url}/search", tmp_path), search)
    empty = sh("find . -name 'no-such-file-*'", tmp_path)
    assert "search.empty" in names(empty, search)


def test_gui_unchanged_and_element_not_found(tmp_path: Path, http_url: str) -> None:
    page = sh(f"curl -s {http_url}/tool-ok", tmp_path)
    web = Trajectory(domain="web").with_turn({"action": "click", "id": 7}, page)
    assert "gui.unchanged" in names(page, web)
    assert "gui.unchanged" not in names(page + "\n[8] button 'Next'", web)
    # No GUI driver runs here: the wording below is the one browser drivers print.
    assert "gui.element_not_found" in names("Error: element with id 42 not found", web)


def test_clean_output_gives_no_failure(tmp_path: Path) -> None:
    out = sh("mkdir src && echo x > src/a.py && ls -la src && git --version", tmp_path)
    assert names(out) == set()


async def test_rule_judge_most_severe_wins(tmp_path: Path) -> None:
    out = sh("touch a && rm -v a && cat a", tmp_path)
    verdict = await RuleJudge().judge(
        TERM, "rm -v a && cat a", Prediction(action="x", observation=out)
    )
    assert verdict.outcome is Outcome.RISKY
    assert {"risk.deleted", "shell.no_such_file"} <= {s.name for s in verdict.signals}
    only_shell = await RuleJudge(families=["shell"]).judge(
        TERM, "x", Prediction(action="x", observation=out)
    )
    assert only_shell.outcome is Outcome.FAILURE


# ---------------------------------------------------------------------------
# Plain-text MCP errors: real results of real MCP servers over stdio.

MCP = Trajectory(domain="mcp")


async def _mcp_results(
    command: str, args: list[str], calls: dict[str, tuple[str, dict[str, object]]]
) -> dict[str, tuple[bool, str]]:
    """``key -> (is_error, text)`` of each call, made with the MCP client over stdio."""
    mcp = pytest.importorskip("mcp")
    params = mcp.StdioServerParameters(command=command, args=args)
    out: dict[str, tuple[bool, str]] = {}
    async with mcp.Client(params, mode="legacy") as client:
        for key, (name, arguments) in calls.items():
            result = await client.call_tool(name, arguments)
            text = "\n".join(getattr(c, "text", "") for c in result.content)
            out[key] = (bool(result.is_error), text)
    return out


async def _judged(observation: str) -> tuple[Outcome, set[str]]:
    verdict = await RuleJudge().judge(MCP, "x", Prediction(action="x", observation=observation))
    return verdict.outcome, {s.name for s in verdict.signals}


@pytest.mark.integration
async def test_mcp_text_errors_from_the_filesystem_server(
    mcp_fs_server: Path, tmp_path: Path
) -> None:
    from aw_lookahead.mcp.results import result_text  # how the proxy records a result

    root = tmp_path / "root"
    root.mkdir()
    a, log = str(root / "a.txt"), str(root / "app.log")
    (root / "a.txt").write_text("hello\n")
    (root / "app.log").write_text("started\nError: disk full\nENOENT: gone\n")
    calls: dict[str, tuple[str, dict[str, object]]] = {
        "missing": ("read_text_file", {"path": str(root / "missing.txt")}),
        "not_dir": ("create_directory", {"path": f"{a}/sub"}),
        "outside": ("read_text_file", {"path": str(tmp_path / "elsewhere.txt")}),
        "exists": ("move_file", {"source": a, "destination": a}),
        "no_match": ("edit_file", {"path": a, "edits": [{"oldText": "zzz", "newText": "y"}]}),
        "invalid": ("write_file", {"path": a}),
        "read": ("read_text_file", {"path": a}),
        "read_log": ("read_text_file", {"path": log}),
        "list": ("list_directory", {"path": str(root)}),
        "write": ("write_file", {"path": str(root / "b.txt"), "content": "b"}),
        "info": ("get_file_info", {"path": a}),
    }
    real = await _mcp_results(str(mcp_fs_server), [str(root)], calls)
    expected_errors = {
        "missing": "mcp.errno",  # ENOENT: no such file or directory, open '...'
        "not_dir": "mcp.errno",  # ENOTDIR: not a directory, realpath '...'
        "outside": "mcp.access_denied",  # Access denied - path outside allowed directories
        "exists": "mcp.refused",  # Destination already exists: ...
        "no_match": "mcp.refused",  # Could not find exact match for edit
        "invalid": "mcp.error_text",  # MCP error -32602: Input validation error: ...
    }
    for key, rule in expected_errors.items():
        is_error, text = real[key]
        assert is_error, (key, text)
        assert await _judged(text) == (Outcome.FAILURE, {rule}), (key, text)
        rendered = result_text(_Result(text))
        assert rendered.startswith("Error: ")
        outcome, found = await _judged(rendered)
        assert outcome is Outcome.FAILURE
        assert {"mcp.error_text", rule} <= found, (key, rendered)
    for key in ("read", "read_log", "list", "write", "info"):
        is_error, text = real[key]
        assert not is_error, (key, text)
        assert await _judged(text) == (Outcome.UNKNOWN, set()), (key, text)
    assert "Error: disk full" in real["read_log"][1]  # not at the start: file content, no error


@pytest.mark.integration
async def test_a_predicted_argument_error_is_set_aside_when_the_arguments_match_the_schema(
    mcp_fs_server: Path, tmp_path: Path
) -> None:
    """The real server's own schema and its own "invalid arguments" error: predicted for a
    call whose arguments match the schema, the error is not evidence; for a call whose
    arguments do not, it stays a failure."""
    mcp = pytest.importorskip("mcp")
    root = tmp_path / "root"
    root.mkdir()
    good = {"path": str(root / "todo.txt"), "content": "ship v2\n"}
    bad = {"path": str(root / "todo.txt")}
    async with mcp.Client(
        mcp.StdioServerParameters(command=str(mcp_fs_server), args=[str(root)]), mode="legacy"
    ) as client:
        tools = [
            t.model_dump(mode="json", by_alias=True, exclude_none=True)
            for t in (await client.list_tools()).tools
        ]
        result = await client.call_tool("write_file", bad)
    assert result.is_error
    error = "\n".join(getattr(c, "text", "") for c in result.content)
    assert "invalid" in error.lower()
    with_tools = Trajectory(domain="mcp", tools=tools)

    async def judge(arguments: dict[str, object], trajectory: Trajectory) -> Verdict:
        action = {"name": "write_file", "arguments": arguments}
        return await RuleJudge().judge(
            trajectory, action, Prediction(action=action, observation=error)
        )

    set_aside = await judge(good, with_tools)
    assert set_aside.outcome is Outcome.UNKNOWN
    assert [s.name for s in set_aside.signals] == ["mcp.arguments_valid"]
    assert "write_file's input schema" in set_aside.reason
    assert (await judge(bad, with_tools)).outcome is Outcome.FAILURE
    assert (await judge(good, MCP)).outcome is Outcome.FAILURE  # no schema: nothing to check


async def test_a_set_aside_argument_error_leaves_the_destructive_rule_in_force() -> None:
    """A tool without annotations that deletes: with its argument error set aside, the
    prediction no longer says it fails, so the destroying effect is what is judged."""
    tool = {
        "name": "delete_path",
        "description": "Deletes a file or folder.",
        "inputSchema": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "recursive": {"type": "boolean"}},
            "required": ["path"],
        },
    }
    trajectory = Trajectory(domain="mcp", tools=[tool])
    action = {"name": "delete_path", "arguments": {"path": "data", "recursive": True}}
    said = "Error: Invalid arguments for tool delete_path: path is required"
    verdict = await RuleJudge().judge(
        trajectory, action, Prediction(action=action, observation=said)
    )
    assert verdict.outcome is Outcome.RISKY
    assert {s.name for s in verdict.signals} == {"mcp.arguments_valid", "risk.destructive_tool"}
    other = "Error: ENOENT: no such file or directory, stat 'data'"
    kept = await RuleJudge().judge(trajectory, action, Prediction(action=action, observation=other))
    assert kept.outcome is Outcome.FAILURE  # only an argument claim is checked


@pytest.mark.integration
async def test_mcp_text_errors_from_the_git_server(mcp_git_server: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    git = "git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main"
    sh(
        f"{git} init -q repo && cd repo && echo a > a.txt && {git} add a.txt && "
        f"{git} commit -qm one",
        tmp_path,
    )
    calls: dict[str, tuple[str, dict[str, object]]] = {
        "bad_ref": ("git_show", {"repo_path": str(repo), "revision": "no-such-ref"}),
        "outside": ("git_log", {"repo_path": str(tmp_path / "other")}),
        "status": ("git_status", {"repo_path": str(repo)}),
        "log": ("git_log", {"repo_path": str(repo)}),
    }
    real = await _mcp_results(str(mcp_git_server), ["--repository", str(repo)], calls)
    for key in ("bad_ref", "outside"):
        is_error, text = real[key]
        assert is_error, (key, text)
        assert text.startswith("Error executing tool git_")
        assert await _judged(text) == (Outcome.FAILURE, {"mcp.error_text"}), (key, text)
    for key in ("status", "log"):
        is_error, text = real[key]
        assert not is_error, (key, text)
        assert await _judged(text) == (Outcome.UNKNOWN, set()), (key, text)


class _Result:
    """The two fields of an ``isError`` ``CallToolResult`` that ``result_text`` reads."""

    def __init__(self, text: str) -> None:
        self.content = [type("Text", (), {"text": text})()]
        self.structured_content = None
        self.is_error = True
