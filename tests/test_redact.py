"""Secret redaction: the pattern table, stable placeholders, records, and files we write."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from aw_lookahead.redact import (
    Redactor,
    default_redactor,
    redact_messages,
    redact_text,
    set_default_redactor,
)
from aw_lookahead.trajectory import JsonlWriter, Trajectory
from secret_corpus_support import corpus, split_across_turns

OPENAI = "sk-proj-" + "Ab3dEf6hIj9lMn2pQr5tUv8xYz" * 2
ANTHROPIC = "sk-ant-api03-" + "x7Yq" * 12
GOOGLE = "AIza" + "SyD4k9" * 5 + "Qw8Rt"
AWS_ID = "AKIA" + "Q7W2E9R4T6Y1U3I5"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY9q2Lr5T0zk"
GITHUB = "ghp_" + "a1B2c3D4e5F6" * 3
GITHUB_PAT = "github_pat_11ABCDEFG0" + "x" * 40
GITLAB = "glpat-" + "Zq8Wm3Xv7Np2Lk5Hj9Rt"
SLACK = "xoxb-2048-4096-" + "aBcDeFgHiJkL"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAx7\nq9Zr3k==\n-----END RSA PRIVATE KEY-----"
PASSWORD = "hunter2-Kx9"

CASES = [
    (f"export OPENAI_API_KEY={OPENAI}", OPENAI, "OPENAI_KEY"),
    (f"key: {ANTHROPIC}", ANTHROPIC, "ANTHROPIC_KEY"),
    (f"?key={GOOGLE}&q=1", GOOGLE, "GOOGLE_API_KEY"),
    (f"aws_access_key_id = {AWS_ID}", AWS_ID, "AWS_KEY_ID"),
    (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET, "AWS_SECRET"),
    (f"{AWS_ID}:{AWS_SECRET}", AWS_SECRET, "AWS_SECRET"),
    (f"git clone https://{GITHUB}@github.com/o/r", GITHUB, "GITHUB_TOKEN"),
    (f"token {GITHUB_PAT}", GITHUB_PAT, "GITHUB_TOKEN"),
    (f"CI_JOB={GITLAB}", GITLAB, "GITLAB_TOKEN"),
    (f"slack {SLACK}", SLACK, "SLACK_TOKEN"),
    (f"cookie session={JWT}", JWT, "JWT"),
    (f"{PEM}\nrest", "MIIEpAIBAAKCAQEAx7", "PRIVATE_KEY"),
    ("curl -H 'Authorization: Basic dXNlcjpwYXNz' x", "dXNlcjpwYXNz", "SECRET"),
    ("Authorization: Bearer abc.def-123456789", "abc.def-123456789", "SECRET"),
    (f"psql postgres://admin:{PASSWORD}@db:5432/x", PASSWORD, "SECRET"),
    (f"mysql --password={PASSWORD} -u root", PASSWORD, "SECRET"),
    (f"curl -u admin:{PASSWORD} https://x.org", PASSWORD, "SECRET"),
    (f"curl --user=admin:{PASSWORD} https://x.org", PASSWORD, "SECRET"),
    (f"login --api-key {PASSWORD}", PASSWORD, "SECRET"),
    (f"PASSWORD={PASSWORD} ./run", PASSWORD, "SECRET"),
    (f"DB_PASSWORD='{PASSWORD} two'", f"{PASSWORD} two", "SECRET"),
    (f"STRIPE_KEY={PASSWORD}", PASSWORD, "SECRET"),
    (f"GITHUB_TOKEN={PASSWORD}", PASSWORD, "SECRET"),
    (f"client_secret: {PASSWORD}", PASSWORD, "SECRET"),
    (json.dumps({"user": "bob", "password": PASSWORD}), PASSWORD, "SECRET"),
    (json.dumps({"keystrokes": f'export PASSWORD="{PASSWORD}"\n'}), PASSWORD, "SECRET"),
]


@pytest.mark.parametrize(("text", "secret", "kind"), CASES)
def test_each_pattern_redacts_its_secret(text: str, secret: str, kind: str) -> None:
    r = Redactor()
    out = r.text(text)
    assert secret not in out
    assert f"[REDACTED_{kind}_" in out
    assert r.text(out) == out  # idempotent


@pytest.mark.parametrize(
    "text",
    [
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "max_tokens=100 sort_key=name prompt_tokens: 12",
        '{"key": "Enter", "keystrokes": "ls -la\\n", "duration": 1}',
        '{"password": {"type": "string"}, "required": ["password"]}',
        '{"api_key": null, "token": true}',
        "The password is required. Use a token.",
        "ssh://git@github.com/o/r.git and https://example.com/a:b",
        "git checkout -b feature-login && docker login registry.example.com",
        "mysql -u root -p shop; sort -u names.txt | uniq -c",
        "echo aGVsbG8gd29ybGQgdGhpcyBpcyBmaW5l | base64 -d",
        "The cookie policy: see docs. default: 30 seconds. machine learning models",
        "https://example.com/path?q=a%20b&page=2 export PATH=/usr/local/bin:$PATH",
        "token_count: 12 passed: 12 tests",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert Redactor().text(text) == text


def test_placeholders_are_stable_within_a_redactor_and_keyed() -> None:
    r = Redactor()
    first = r.text(f"echo {OPENAI}")
    later = r.text(f"history ... OPENAI_API_KEY={OPENAI} ... {GITHUB}")
    token = re.search(r"\[REDACTED_OPENAI_KEY_[0-9a-f]{6}\]", first)
    assert token is not None
    assert token.group(0) in later
    # Different secrets, different placeholders; a different key, different placeholders.
    assert r.placeholder("secret", "a") != r.placeholder("secret", "b")
    assert Redactor(key=b"1").placeholder("x", "a") != Redactor(key=b"2").placeholder("x", "a")
    # One value gets one placeholder whichever context revealed it.
    flag = r.text(f"--password {PASSWORD}").split()[-1]
    assert flag in r.text(f"postgres://u:{PASSWORD}@h/db")
    assert r.record({"password": PASSWORD}) == {"password": flag}


def test_a_secret_flag_takes_its_value_from_its_own_line_only() -> None:
    """A shell command ends at a newline, so ``--auth-token`` at a line's end has no value
    there: the next line's words are not taken for it, and a password the next line
    names is still found (it leaked when the flag's value was that line's first word).
    A backslash continuation still carries the value."""
    r = Redactor()
    out = r.text(f"see `--auth-token\nपासवर्ड: {PASSWORD}\n")
    assert PASSWORD not in out
    assert "पासवर्ड: [REDACTED_" in out
    assert "--auth-token\n" in out
    assert PASSWORD not in r.text(f"cli --auth-token \\\n  {PASSWORD} --verbose")
    assert PASSWORD not in r.text(f"cli --password\t{PASSWORD}")


def test_messages_keep_a_shared_history_byte_identical() -> None:
    r = Redactor()
    history = [
        {"role": "system", "content": "You simulate a shell."},
        {"role": "user", "content": f"### Turn 1\nexport AWS_SECRET_ACCESS_KEY={AWS_SECRET}"},
        {"role": "assistant", "content": f"{AWS_ID} ok"},
    ]
    a = r.messages([*history, {"role": "user", "content": "ls"}])
    b = r.messages([*history, {"role": "user", "content": f"cat {GITHUB}"}])
    assert a[:3] == b[:3]
    assert AWS_SECRET not in json.dumps(a)
    assert GITHUB not in json.dumps(b)
    assert history[1]["content"].endswith(AWS_SECRET)  # input untouched


def test_records_redact_strings_and_secret_named_fields() -> None:
    r = Redactor()
    record = {
        "action": {"name": "login", "arguments": {"user": "bob", "Password": "pw"}},
        "env": {"STRIPE_KEY": "abc", "HOME": "/root"},
        "headers": [{"authorization": "Basic Zm9v"}],
        "observation": f"token={GITHUB}",
        "key": "cache-key",
        "sort_key": "name",
        "usage": {"prompt_tokens": 3},
    }
    out = r.record(record)
    flat = json.dumps(out)
    assert "pw" not in json.dumps(out["action"])
    assert out["env"]["STRIPE_KEY"].startswith("[REDACTED_")
    assert "abc" not in re.sub(r"\[REDACTED_\w+\]", "", flat)  # a placeholder's hex may hold it
    assert "Zm9v" not in flat
    assert GITHUB not in flat
    assert out["env"]["HOME"] == "/root"
    assert out["key"] == "cache-key"
    assert out["sort_key"] == "name"
    assert out["usage"] == {"prompt_tokens": 3}


def test_user_patterns_and_switching_off() -> None:
    r = Redactor(extra={"internal_token": r"itk_[0-9a-f]{16}"})
    assert r.text("use itk_0123456789abcdef now") == (
        f"use {r.placeholder('internal_token', 'itk_0123456789abcdef')} now"
    )
    r.add("employee_id", r"\bemp:(?P<secret>\d{6})\b")
    assert r.text("emp:123456") == f"emp:{r.placeholder('employee_id', '123456')}"
    assert "employee_id" in r.kinds
    with pytest.raises(ValueError, match="kind"):
        r.add("bad kind", "x")
    off = Redactor(enabled=False)
    assert off.text(OPENAI) == OPENAI
    assert off.record({"password": "x"}) == {"password": "x"}
    assert Redactor(builtin=False).text(OPENAI) == OPENAI


def test_default_redactor_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        monkeypatch.setenv("AW_LOOKAHEAD_REDACT", "off")
        set_default_redactor(None)
        assert redact_text(OPENAI) == OPENAI
        monkeypatch.delenv("AW_LOOKAHEAD_REDACT")
        set_default_redactor(None)
        assert OPENAI not in redact_text(OPENAI)
        assert default_redactor() is default_redactor()
        custom = Redactor(enabled=False)
        set_default_redactor(custom)
        assert redact_messages([{"role": "user", "content": OPENAI}])[0]["content"] == OPENAI
    finally:
        set_default_redactor(None)


def test_jsonl_writer_redacts_and_creates_private_files(tmp_path: Path) -> None:
    path = tmp_path / "out" / "records.jsonl"
    traj = Trajectory(domain="terminal", task=f"deploy with {AWS_ID}").with_turn(
        f"export GITHUB_TOKEN={GITHUB}", f"{PEM}\n"
    )
    with JsonlWriter(path) as writer:
        writer.write(traj)
        writer.write({"arguments": {"password": PASSWORD}, "note": f"key {OPENAI}"})
    text = path.read_text()
    for secret in (AWS_ID, GITHUB, "MIIEpAIBAAKCAQEAx7", PASSWORD, OPENAI):
        assert secret not in text
    assert path.stat().st_mode & 0o777 == 0o600
    first = Trajectory.model_validate_json(text.splitlines()[0])
    assert re.fullmatch(
        r"export GITHUB_TOKEN=\[REDACTED_GITHUB_TOKEN_[0-9a-f]{6}\]", str(first.turns[0].action)
    )
    with JsonlWriter(path, append=False, redactor=Redactor(enabled=False)) as writer:
        writer.write(traj)
    assert GITHUB in path.read_text()


SHAPES = corpus()


def test_the_corpus_is_large_and_fresh() -> None:
    assert len(SHAPES) >= 200
    assert {secret for _, _, secret in SHAPES}.isdisjoint({s for _, _, s in corpus()})


@pytest.mark.parametrize(("name", "line", "secret"), SHAPES, ids=[s[0] for s in SHAPES])
def test_every_corpus_shape_is_redacted(name: str, line: str, secret: str) -> None:
    r = Redactor()
    out = r.text(line)
    assert secret not in out, f"{name}: {out!r}"
    assert "[REDACTED_" in out
    assert r.text(out) == out
    # The same line inside a chat message, inside a JSON record (escaped on disk), and as a
    # prompt renders a tool argument: JSON-escaped after an earlier line.
    assert secret not in json.dumps(r.messages([{"role": "user", "content": line}]))
    assert secret not in r.text(json.dumps({"content": f"first line\n{line}\tend"}))
    assert secret not in json.dumps(r.record({"observation": line}))
    # A redactor that has not seen the line: found in the JSON-escaped text alone (a tool
    # call rendered into a prompt, ASCII-escaped or not).
    for escaped in (json.dumps({"command": f"ls\n{line}"}), json.dumps([line], ensure_ascii=False)):
        assert secret not in Redactor().text(escaped), f"{name}: {escaped!r}"


def test_a_secret_seen_once_is_replaced_everywhere_even_earlier() -> None:
    outputs, secret = split_across_turns()
    r = Redactor()
    later_first = r.messages([{"role": "tool", "content": t} for t in reversed(outputs)])
    assert secret not in json.dumps(later_first)
    fresh = Redactor()
    record = fresh.record({"turns": [{"observation": outputs[1]}, {"observation": outputs[0]}]})
    assert secret not in json.dumps(record)
    assert Redactor().text(outputs[1]) == outputs[1]  # a bare value alone is not a secret
    # The second pass touches only contents that exist (a tool-call message may have none).
    calls = {"role": "assistant", "tool_calls": [{"id": "c1"}]}
    out = Redactor().messages([calls, {"role": "tool", "content": outputs[0]}])
    assert "content" not in out[0]


@pytest.mark.parametrize(
    "field", ["userPassword", "accessToken", "SecretAccessKey", "x-api-key", "client_secret",
              "Contraseña", "sessionId", "AccountKey", "secret_key"]
)  # fmt: skip
def test_secret_named_fields_in_any_case_style(field: str) -> None:
    value = "v" + PASSWORD
    assert value not in json.dumps(Redactor().record({"args": {field: value}}))


@pytest.mark.parametrize("field", ["keystrokes", "sort_key", "max_tokens", "token_count", "key"])
def test_ordinary_fields_keep_their_values(field: str) -> None:
    assert Redactor().record({field: "plain-value-1"}) == {field: "plain-value-1"}


def test_every_corpus_shape_stays_off_disk(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    with JsonlWriter(path) as writer:
        for name, line, _ in SHAPES:
            traj = Trajectory(domain="terminal", task=name).with_turn(line, line)
            writer.write(traj)
            writer.write({"arguments": {"content": line}, "note": line})
    text = path.read_text()
    for name, _, secret in SHAPES:
        assert secret not in text, f"{name} written to disk"


def test_a_token_right_after_a_json_unicode_escape_is_redacted() -> None:
    # json.dumps (ensure_ascii) writes "é" as \u00e9: the token then follows a hex digit
    key_id, password = "AKIAQLOBSUAFXWCQAYZS", "Pw0rd-x81"
    for line in (f"é{key_id} après", f"密钥{key_id}", f"é mysql -u root -p{password} db"):
        escaped = json.dumps({"content": line})
        assert "\\u" in escaped
        out = Redactor().text(escaped)
        assert key_id not in out, out
        assert password not in out, out
        assert "[REDACTED_" in out
    assert Redactor().text(f"x9{key_id}") == f"x9{key_id}", "after a plain digit: not a token"


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_a_private_key_in_json_escaped_again_and_again_is_redacted(depth: int) -> None:
    # A JSON document carried as a string in another, `depth` times: the key's lines are
    # split by ever longer escapes (\n, \\n, \\\\n ...).
    body = "MIIEpAIBAAKCAQEAx7"
    text: str = PEM
    for _ in range(depth):
        text = json.dumps({"content": text})
    out = Redactor().text(text)
    assert body not in out, out
    assert "[REDACTED_" in out
