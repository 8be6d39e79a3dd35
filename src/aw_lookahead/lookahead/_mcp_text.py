"""Plain-text MCP tool errors, as real servers word them (the ``mcp`` rule family).

An ``isError`` result's text rarely says ``isError``; it reads like these
(the filesystem server from npm, the git server from PyPI, the Python SDK):

* ``ENOENT: no such file or directory, open '/x'`` / ``[Errno 2] No such file ...``
* ``Access denied - path outside allowed directories: /etc/passwd not in /srv``
* ``Error executing tool git_show: Ref 'nope' did not resolve to an object``
* ``MCP error -32602: Input validation error: Invalid arguments for tool write_file``
* ``Destination already exists: /srv/a.txt``, ``Could not find exact match for edit``
* ``Error: ...`` (how clients and the proxy render an ``isError`` result)

Every pattern is anchored to the start of the whole text (``\\A``, after an
optional ``Error:``): a result that *is* an error starts so, while a file or
log that merely contains such a line further down is not a failed call.
"""

from __future__ import annotations

__all__ = ["MCP_TEXT_RULES"]

_START = r"\A\s*(?:error:\s*)?"  # the start of the text, maybe after a client's "Error: "
_ERRNO = "ENOENT|EACCES|EPERM|EEXIST|ENOTDIR|EISDIR|ENOTEMPTY|EBUSY|EROFS|ENOSPC|ELOOP|EXDEV"

#: (rule name, pattern, detail); every rule means failure and ignores case.
MCP_TEXT_RULES: tuple[tuple[str, str, str], ...] = (
    (
        "mcp.error_text",
        r"\A\s*(?:\[?error\]?\s*[:\]]|error executing tool\b|tool execution failed\b"
        r"|mcp error -?\d+\b|\w*(?:Error|Exception):\s)",
        "the tool result is an error",
    ),
    (
        "mcp.errno",
        rf"{_START}(?:(?:{_ERRNO}):\s|\[Errno \d+\])",
        "the server hit an OS error (missing path, no permission, ...)",
    ),
    (
        "mcp.access_denied",
        rf"{_START}(?:access denied|permission denied|forbidden|unauthori[sz]ed)\b",
        "the server refuses the call",
    ),
    (
        "mcp.refused",
        rf"{_START}(?:(?:destination|file|path|directory|target|branch|repository) already exists\b"
        r"|(?:could not|couldn't|cannot|can't|unable to|failed to) \w+)",
        "the tool says it could not do it",
    ),
)
