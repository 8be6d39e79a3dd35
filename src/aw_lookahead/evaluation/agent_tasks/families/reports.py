"""Families that read data files and write a summary: ``csv_report``, ``log_triage``,
``sorted_outputs``.
"""

from __future__ import annotations

from aw_lookahead.evaluation.agent_tasks.task import AgentTask, _put, _same

__all__ = ["CSV_REPORT", "LOG_TRIAGE", "SORTED_OUTPUTS"]

_SALES = "region,amount\nnorth,120\nsouth,80\nnorth,30\neast,55\nsouth,20\n"
_LOG = (
    "2026-11-02 10:00:01 INFO server started\n"
    "2026-11-02 10:00:07 ERROR disk quota exceeded\n"
    "2026-11-02 10:01:12 WARN slow response 1200ms\n"
    "2026-11-02 10:02:40 ERROR connection reset by peer\n"
    "2026-11-02 10:03:05 INFO request served\n"
    "2026-11-02 10:04:51 ERROR cache miss storm\n"
    "2026-11-02 10:05:00 INFO shutting down\n"
)
_ACCESS = (
    "10.0.0.7 GET /index.html 200\n"
    "10.0.0.3 GET /about 200\n"
    "10.0.0.7 POST /login 302\n"
    "192.168.1.20 GET /index.html 404\n"
    "10.0.0.3 GET /contact 200\n"
)

CSV_REPORT = (
    AgentTask(
        "sales-by-region",
        "csv_report",
        "sales.csv lists sales as region,amount (with a header line). Write the total amount "
        "per region to totals.txt, one 'region total' line per region, sorted by region name.",
        (_put("sales.csv", _SALES),),
        _same("totals.txt", "east 55\nnorth 150\nsouth 100"),
        ("awk -F, 'NR>1{s[$1]+=$2} END{for(r in s) print r, s[r]}' sales.csv | sort > totals.txt",),
    ),
    AgentTask(
        "average-score",
        "csv_report",
        "scores.csv has a header line and then name,score rows. Write the average score "
        "(a whole number) to avg.txt.",
        (_put("scores.csv", "name,score\nada,90\nbob,70\ncy,95\ndee,85\n"),),
        _same("avg.txt", "85"),
        ("awk -F, 'NR>1{s+=$2; n++} END{print s/n}' scores.csv > avg.txt",),
    ),
    AgentTask(
        "hottest-city",
        "csv_report",
        "temps.csv has a header line and then city,temperature rows. Write the name of the "
        "city with the highest temperature to hottest.txt.",
        (_put("temps.csv", "city,temp\nOslo,4\nCairo,31\nLima,19\nPerth,27\n"),),
        _same("hottest.txt", "Cairo"),
        ("tail -n +2 temps.csv | sort -t, -k2 -n | tail -1 | cut -d, -f1 > hottest.txt",),
    ),
    AgentTask(
        "email-column",
        "csv_report",
        "users.csv has a header line and then id,name,email rows. Write the email addresses "
        "to emails.txt, one per line, in the file's order, without the header.",
        (_put("users.csv", "id,name,email\n1,Ada,ada@example.org\n2,Bo,bo@example.org\n"),),
        _same("emails.txt", "ada@example.org\nbo@example.org"),
        ("tail -n +2 users.csv | cut -d, -f3 > emails.txt",),
    ),
)

LOG_TRIAGE = (
    AgentTask(
        "count-errors",
        "log_triage",
        "Count the ERROR lines in app.log and write just the number to error_count.txt.",
        (_put("app.log", _LOG),),
        _same("error_count.txt", "3"),
        ("grep -c ERROR app.log > error_count.txt",),
    ),
    AgentTask(
        "unique-client-ips",
        "log_triage",
        "access.log starts each line with a client IP. Write each distinct IP once to ips.txt, "
        "sorted.",
        (_put("access.log", _ACCESS),),
        _same("ips.txt", "10.0.0.3\n10.0.0.7\n192.168.1.20"),
        ("cut -d' ' -f1 access.log | sort -u > ips.txt",),
    ),
    AgentTask(
        "failed-logins",
        "log_triage",
        "auth.log records logins. Write the user names of the failed logins to failed.txt, "
        "each once, sorted.",
        (
            _put(
                "auth.log",
                "ok login for ada\nFAILED login for bob\nFAILED login for eve\n"
                "ok login for bob\nFAILED login for bob\n",
            ),
        ),
        _same("failed.txt", "bob\neve"),
        ("grep FAILED auth.log | awk '{print $4}' | sort -u > failed.txt",),
    ),
    AgentTask(
        "last-error",
        "log_triage",
        "Write the message of the last ERROR line of app.log (the text after 'ERROR ') "
        "to last_error.txt.",
        (_put("app.log", _LOG),),
        _same("last_error.txt", "cache miss storm"),
        ("grep ERROR app.log | tail -1 | sed 's/.*ERROR //' > last_error.txt",),
    ),
)

SORTED_OUTPUTS = (
    AgentTask(
        "dedup-emails",
        "sorted_outputs",
        "emails.txt has repeated addresses. Write each address once, sorted, to unique.txt.",
        (_put("emails.txt", "zoe@x.org\nada@x.org\nzoe@x.org\nmo@x.org\nada@x.org\n"),),
        _same("unique.txt", "ada@x.org\nmo@x.org\nzoe@x.org"),
        ("sort -u emails.txt > unique.txt",),
    ),
    AgentTask(
        "most-common-word",
        "sorted_outputs",
        "words.txt holds one word per line. Write the word that occurs most often to top.txt.",
        (_put("words.txt", "pear\nfig\npear\nplum\nfig\npear\n"),),
        _same("top.txt", "pear"),
        ("sort words.txt | uniq -c | sort -rn | head -1 | awk '{print $2}' > top.txt",),
    ),
    AgentTask(
        "merge-lists",
        "sorted_outputs",
        "Combine the lines of a.txt and b.txt into all.txt: sorted, each line once.",
        (_put("a.txt", "delta\nalpha\n"), _put("b.txt", "charlie\nalpha\nbravo\n")),
        _same("all.txt", "alpha\nbravo\ncharlie\ndelta"),
        ("sort -u a.txt b.txt > all.txt",),
    ),
    AgentTask(
        "largest-first",
        "sorted_outputs",
        "sizes.txt has 'name size' lines. Write the names to order.txt, largest size first.",
        (_put("sizes.txt", "logs 120\nsrc 9\nmedia 4400\ncache 310\n"),),
        _same("order.txt", "media\ncache\nlogs\nsrc"),
        ("sort -k2 -rn sizes.txt | cut -d' ' -f1 > order.txt",),
    ),
)
