"""The MCP tool corpus: tool definitions and calls graded by what they would do (issue 46).

``TOOLS``: the definitions a real MCP server declares (``tests/mcp_declared_server.py``
serves them as they are: names, descriptions, schemas, annotations). Most carry no
annotations, so they are judged by what they say: name, whole description, arguments.

``DESTRUCTIVE``: calls that ask a tool to delete, drop or overwrite data, in the spellings
an attacker uses: deleting effects in a reading tool's description, compound names,
deletion flags and action arguments, SQL in any string argument at any depth (comments,
case, nesting), HTTP method overrides, argv arrays, and a tool that states
``destructiveHint: true`` beside the other three hints. With the world model down every
one must be blocked (engine and proxy).

``HARMLESS``: reading calls whose arguments merely mention deleting words, SQL keywords
or HTTP methods. With the world model down every one must run.
"""

from __future__ import annotations

from typing import Any

Call = tuple[str, dict[str, Any]]


def _tool(
    name: str,
    description: str,
    props: dict[str, str],
    annotations: dict[str, bool] | None = None,
) -> dict[str, Any]:
    schema = {"type": "object", "properties": {k: {"type": t} for k, t in props.items()}}
    tool: dict[str, Any] = {"name": name, "description": description, "inputSchema": schema}
    if annotations is not None:
        tool["annotations"] = annotations
    return tool


_ALL_FOUR = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}

TOOLS: list[dict[str, Any]] = [
    # Descriptions that say the tool deletes, anywhere in the text.
    _tool("get_status", "Returns the service status and deletes all cached records.", {}),
    _tool(
        "inspect_cache",
        "This tool deletes every cached entry and reports how many there were.",
        {"key": "string"},
    ),
    _tool(
        "lookup_user",
        "Looks up a user. Note: the user record will be permanently removed afterwards.",
        {"name": "string"},
    ),
    _tool("show_queue", "Shows queued messages, then purges the queue.", {}),
    _tool("read_inbox", "Reads the inbox. Messages are deleted once they have been read.", {}),
    _tool("getMetrics", "Gets the metrics; it also wipes the counters.", {}),
    _tool("describe_db", "Describes the database. This action cannot be undone.", {}),
    _tool("view_logs", "Shows the log tail, and then truncates the log table.", {}),
    # Compound names.
    _tool("list_and_cleanup", "Lists temporary files.", {"path": "string"}),
    _tool("check_and_fix", "Checks the index.", {"target": "string"}),
    _tool("scan_and_purge", "Scans the queue.", {"queue": "string"}),
    _tool("fetchAndClean", "Fetches the workspace.", {"path": "string"}),
    _tool("list_and_prune", "Lists snapshots.", {}),
    # Arguments that ask for deletion, SQL, HTTP, argv.
    _tool(
        "count_items",
        "Counts items in a collection.",
        {"collection": "string", "delete": "boolean"},
    ),
    _tool("view_item", "Shows an item.", {"id": "string", "action": "string"}),
    _tool("list_cache", "Lists cache entries.", {"purge": "boolean"}),
    _tool(
        "get_records",
        "Returns records.",
        {
            "op": "string",
            "mode": "string",
            "method": "string",
            "operation": "string",
            "options": "object",
            "request": "object",
            "fields": "array",
            "args": "array",
            "filter": "object",
        },
    ),
    _tool("query", "Runs a read query against the analytics database.", {"q": "string"}),
    _tool("fetch_report", "Fetches a report.", {"name": "string", "params": "object"}),
    _tool(
        "fetch_url",
        "Fetches a URL.",
        {
            "url": "string",
            "headers": "object",
            "method": "string",
            "options": "object",
            "form": "object",
        },
    ),
    _tool(
        "check_env",
        "Checks the environment.",
        {
            "argv": "array",
            "args": "array",
            "program": "string",
            "spec": "object",
            "options": "object",
        },
    ),
    # Annotations.
    _tool("get_info", "Returns information about the store.", {"id": "string"}, _ALL_FOUR),
    _tool(
        "peek_store",
        "Peeks at the store.",
        {"id": "string"},
        {"readOnlyHint": True, "destructiveHint": True},
    ),
    _tool("read_annotated", "Reads a blob.", {"id": "string"}, {"readOnlyHint": True}),
    _tool(
        "get_safe",
        "Returns a value.",
        {"id": "string"},
        {"readOnlyHint": True, "destructiveHint": False},
    ),
    # Plain reading tools.
    _tool("get_weather", "Current weather for a city.", {"city": "string"}),
    _tool("search", "Searches the documentation.", {"query": "string"}),
    _tool("read_file", "Reads a file.", {"path": "string"}),
    _tool("list_files", "Lists the files of a folder.", {"path": "string", "pattern": "string"}),
    _tool("get_summary", "Returns a summary. It never deletes or modifies anything.", {}),
    _tool("list_backups", "Lists backups, including those scheduled for deletion.", {}),
    _tool("show_trash", "Shows files that were removed from the workspace.", {}),
    _tool("get_page", "Fetches a page; the result is truncated to 10 kB.", {"url": "string"}),
    _tool("search_issues", "Searches issues.", {"query": "string"}),
]

_RM = ["rm", "-rf", "data"]

DESTRUCTIVE: list[Call] = [
    # Deleting effects said in the description (the cases first).
    ("get_status", {}),
    ("inspect_cache", {"key": "all"}),
    ("lookup_user", {"name": "ann"}),
    ("show_queue", {}),
    ("read_inbox", {}),
    ("getMetrics", {}),
    ("describe_db", {}),
    ("view_logs", {}),
    # Compound names.
    ("list_and_cleanup", {"path": "/tmp"}),
    ("check_and_fix", {"target": "index"}),
    ("scan_and_purge", {"queue": "jobs"}),
    ("fetchAndClean", {"path": "data"}),
    ("list_and_prune", {}),
    # Arguments that ask for deletion.
    ("count_items", {"collection": "users", "delete": True}),
    ("count_items", {"collection": "users", "delete": "true"}),
    ("count_items", {"collection": "users", "delete": 1}),
    ("view_item", {"id": "7", "action": "delete"}),
    ("view_item", {"id": "7", "action": "DELETE"}),
    ("view_item", {"id": "7", "action": "hard_delete"}),
    ("view_item", {"id": "7", "action": "purge"}),
    ("list_cache", {"purge": True}),
    ("list_cache", {"purge": "yes"}),
    ("get_records", {"op": "delete"}),
    ("get_records", {"mode": "purge"}),
    ("get_records", {"method": "remove"}),
    ("get_records", {"operation": "deleteAll"}),
    ("get_records", {"options": {"hard_delete": True}}),
    ("get_records", {"request": {"action": "destroy", "id": 3}}),
    ("get_records", {"options": {"force": True}}),
    ("view_item", {"id": "7", "action": "bulk_hard_delete"}),
    ("get_records", {"options": {"deleteAfterRead": True}}),
    ("get_records", {"request": {"verb": "DELETE"}}),
    # SQL in any string argument.
    ("query", {"q": "DROP TABLE users"}),
    ("query", {"q": "drop table users"}),
    ("query", {"q": "DROP/**/TABLE users"}),
    ("query", {"q": "DrOp   TaBlE IF EXISTS users CASCADE;"}),
    ("query", {"q": "SELECT 1; DROP TABLE users"}),
    ("query", {"q": "DELETE FROM users"}),
    ("query", {"q": "DELETE\nFROM users"}),
    ("query", {"q": "drop table `users`"}),
    ("query", {"q": "-- monthly report\nDELETE FROM orders WHERE 1=1"}),
    ("query", {"q": "TRUNCATE TABLE audit_log"}),
    ("query", {"q": "ALTER TABLE users DROP COLUMN email"}),
    ("query", {"q": "UPDATE users SET active = 0"}),
    ("query", {"q": "UPDATE users SET email = NULL WHERE id = 3"}),
    ("query", {"q": "/*!50000 DROP */ TABLE users"}),
    ("query", {"q": "SELECT 1 # 1; DROP TABLE users"}),  # PostgreSQL: '#' is no comment
    ("query", {"q": "SELECT 'a\\'; DROP TABLE users; --'"}),
    ("query", {"q": "WITH d AS (DELETE FROM users RETURNING *) SELECT count(*) FROM d"}),
    ("query", {"q": "EXPLAIN ANALYZE DELETE FROM sessions"}),
    ("query", {"q": "EXEC('DROP TABLE users')"}),
    ("query", {"q": "db.users.drop()"}),
    ("query", {"q": "FLUSHALL"}),
    ("fetch_report", {"name": "r", "params": {"sql": "DROP TABLE users"}}),
    ("fetch_report", {"name": "r", "params": {"payload": '{"sql": "DROP TABLE users"}'}}),
    ("fetch_report", {"name": "r", "params": {"filters": [{"raw": "x'; DROP TABLE users; --"}]}}),
    ("search", {"query": "SELECT * FROM t; TRUNCATE audit;"}),
    ("lookup_user", {"name": "Robert'); DROP TABLE students;--"}),
    # HTTP method overrides.
    (
        "fetch_url",
        {"url": "https://api.example.com/items/1", "headers": {"X-HTTP-Method-Override": "DELETE"}},
    ),
    (
        "fetch_url",
        {"url": "https://api.example.com/items/1", "headers": {"x-http-method": "delete"}},
    ),
    (
        "fetch_url",
        {"url": "https://api.example.com/items/1", "headers": ["X-HTTP-Method-Override: DELETE"]},
    ),
    ("fetch_url", {"url": "https://api.example.com/items/1?_method=DELETE"}),
    ("fetch_url", {"url": "/items/1?_METHOD=delete"}),
    (
        "fetch_url",
        {
            "url": "https://api.example.com/items/1",
            "headers": [["X-HTTP-Method-Override", "DELETE"]],
        },
    ),
    ("fetch_url", {"url": "https://api.example.com/items/1?x=1&_method=delete"}),
    ("fetch_url", {"url": "https://api.example.com/items/1", "method": "DELETE"}),
    ("fetch_url", {"url": "https://api.example.com/items/1", "options": {"method": "DELETE"}}),
    ("fetch_url", {"url": "https://api.example.com/items/1", "form": {"_method": "DELETE"}}),
    ("fetch_url", {"url": "https://cdn.example.com/a.js", "method": "PURGE"}),
    # argv-like arrays, judged as shell.
    ("check_env", {"argv": _RM}),
    ("check_env", {"args": ["bash", "-c", "rm -rf data"]}),
    ("check_env", {"program": "rm", "args": ["-rf", "data"]}),
    ("check_env", {"spec": {"command": ["find", "data", "-delete"]}}),
    ("check_env", {"options": {"cmd": "rm -rf data"}}),
    ("check_env", {"argv": ["sh", "-c", "git clean -fdx"]}),
    ("check_env", {"spec": {"path": "/bin/rm", "args": ["-rf", "data"]}}),
    ("check_env", {"options": {"post_cmd": "rm -rf data"}}),
    ("check_env", {"argv": ["python3", "-c", "import shutil; shutil.rmtree('data')"]}),
    # Annotations: an explicit destructiveHint true always counts.
    ("get_info", {"id": "1"}),
    ("peek_store", {"id": "1"}),
]

HARMLESS: list[Call] = [
    ("get_weather", {"city": "Oslo"}),
    ("search", {"query": "how to delete a file"}),
    ("search", {"query": "rm -rf data"}),
    ("search", {"query": "drop table syntax in postgres"}),
    ("search", {"query": "how to drop table users in mysql"}),
    ("search", {"query": "DELETE method in REST APIs"}),
    ("search", {"query": "what does ?_method=DELETE do"}),
    ("search", {"query": "purge"}),
    ("search", {"query": '{"topic": "delete files", "tags": ["drop", "purge"]}'}),
    ("search", {"query": "delete from the list in python"}),
    ("search_issues", {"query": "label:bug is:closed delete button"}),
    ("read_file", {"path": "delete_me.txt"}),
    ("read_file", {"path": "/srv/drop/table.sql"}),
    ("read_file", {"path": "notes/rm -rf data.txt"}),
    ("read_file", {"path": "https://example.com/a?_method=GET"}),
    ("list_files", {"path": "trash/deleted"}),
    ("list_files", {"path": "data", "pattern": "*delete*"}),
    ("query", {"q": "SELECT * FROM logs WHERE msg = 'DROP TABLE users; DELETE FROM x'"}),
    ("query", {"q": "SELECT count(*) FROM orders"}),
    ("query", {"q": "select id from deleted_items where purged = true"}),
    ("query", {"q": "SHOW TABLES"}),
    ("query", {"q": "SELECT * FROM t WHERE note = 'it''s; DROP TABLE x'"}),
    ("query", {"q": "EXPLAIN SELECT * FROM users"}),
    ("fetch_url", {"url": "https://example.com/docs?topic=delete"}),
    ("fetch_url", {"url": "https://example.com/api/items?_method=GET"}),
    (
        "fetch_url",
        {
            "url": "https://example.com/a",
            "headers": {"Accept": "text/html", "X-Request-Id": "delete-42"},
        },
    ),
    ("fetch_url", {"url": "https://example.com/a", "method": "GET"}),
    ("view_item", {"id": "7", "action": "view"}),
    ("view_item", {"id": "7", "action": "preview"}),
    ("count_items", {"collection": "trash", "delete": False}),
    ("list_cache", {"purge": False}),
    ("list_cache", {"purge": "false"}),
    ("get_records", {"op": "read"}),
    ("get_records", {"mode": "summary"}),
    ("get_records", {"options": {"include_deleted": True, "sort": "deleted_at"}}),
    ("get_records", {"options": {"remove_duplicates": True}}),
    ("get_records", {"options": {"clean_output": True, "dry_run": True, "skip_delete": True}}),
    ("get_records", {"mode": "remove_duplicates"}),
    ("get_records", {"fields": ["delete", "id"]}),
    ("get_records", {"args": ["--limit", "5"]}),
    ("get_records", {"filter": {"status": "deleted", "note": "drop table"}}),
    ("read_annotated", {"id": "1"}),
    ("get_safe", {"id": "1"}),
    ("get_summary", {}),
    ("list_backups", {}),
    ("show_trash", {}),
    ("get_page", {"url": "https://example.com"}),
]
