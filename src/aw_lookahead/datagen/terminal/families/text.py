"""Terminal families: text tools (grep, sort, uniq, wc, cut, head/tail, awk, sed, tr, find,
xargs, jq), pipes and redirections."""

from __future__ import annotations

import json
import random

from aw_lookahead.datagen.terminal.spec import (
    CITIES,
    LEVELS,
    NAMES,
    NOUNS,
    TaskSpec,
    bad,
    family,
    lines_file,
    ok,
    pick,
    typo,
    words,
)

STATES = ("started", "failed", "ok", "slow")


def _log_lines(rng: random.Random, n: int) -> list[str]:
    return [f"{rng.choice(LEVELS)} {rng.choice(NOUNS)} {rng.choice(STATES)}" for _ in range(n)]


def _csv(rng: random.Random, n: int) -> tuple[list[str], list[tuple[str, str, int]]]:
    rows = [(name, rng.choice(CITIES), rng.randint(10, 99)) for name in pick(rng, NAMES, n)]
    return ["name,city,score"] + [f"{a},{b},{c}" for a, b, c in rows], rows


@family("text_grep_levels")
def _grep_levels(rng: random.Random) -> TaskSpec:
    lines = _log_lines(rng, rng.randint(5, 9))
    level = rng.choice(LEVELS)
    files = {"app.log": lines_file(lines)}
    steps = [
        ok(f"grep -c {level} app.log"),
        ok(f"grep -n {level} app.log"),
        ok(f"grep -v {level} app.log | head -n 3"),
        bad(f"grep {level} {typo(rng, 'app')}.log"),
        ok(f"grep -ci {level.lower()} app.log"),
    ]
    return TaskSpec(f"Inspect the {level} lines of app.log.", steps, files)


@family("text_sort_uniq")
def _sort_uniq(rng: random.Random) -> TaskSpec:
    pool = words(rng, rng.randint(3, 5))
    items = [rng.choice(pool) for _ in range(rng.randint(6, 10))]
    files = {"items.txt": lines_file(items)}
    steps = [
        ok("sort items.txt | uniq -c | sort -rn"),
        ok("sort -u items.txt | wc -l"),
        bad("sort -k items.txt"),
        ok("uniq -d <(sort items.txt)"),
    ]
    if rng.random() < 0.5:
        steps.insert(1, bad("uniq -c items.txt | sort -rn | head -n 1 | sort -x"))
    return TaskSpec("Count how often each item occurs in items.txt.", steps, files)


@family("text_wc_counts")
def _wc(rng: random.Random) -> TaskSpec:
    name = rng.choice(words(rng, 3))
    lines = [" ".join(words(rng, rng.randint(1, 4))) for _ in range(rng.randint(2, 6))]
    files = {f"{name}.txt": lines_file(lines)}
    steps = [
        ok(f"wc -l {name}.txt"),
        ok(f"wc -w < {name}.txt"),
        ok(f"wc -c {name}.txt"),
        bad(f"wc -l {name}"),
        bad(f"wc --lines=2 {name}.txt"),
    ]
    return TaskSpec(f"Count the lines, words and bytes of {name}.txt.", steps, files)


@family("text_cut_csv")
def _cut_csv(rng: random.Random) -> TaskSpec:
    lines, _ = _csv(rng, rng.randint(3, 6))
    files = {"people.csv": lines_file(lines)}
    steps = [
        ok("head -n 1 people.csv"),
        ok("cut -d, -f2 people.csv | tail -n +2 | sort -u"),
        bad("cut -d, -f0 people.csv"),
        ok("cut -d, -f1,3 people.csv | tail -n +2"),
        bad("cut -f2 -d people.csv"),
    ]
    return TaskSpec("List the cities and scores in people.csv.", steps, files)


@family("text_head_tail")
def _head_tail(rng: random.Random) -> TaskSpec:
    n = rng.randint(8, 30)
    h, t = rng.randint(1, 4), rng.randint(1, 4)
    steps = [
        ok(f"seq {n} > nums.txt"),
        ok(f"head -n {h} nums.txt"),
        ok(f"tail -n {t} nums.txt"),
        bad(f"head -n {rng.choice(('x', 'three', '-'))} nums.txt"),
        ok(f"tail -n +{n - 1} nums.txt"),
        ok(f"sed -n '{h + 1},{h + 2}p' nums.txt"),
    ]
    return TaskSpec(f"Show the start, the end and a middle slice of a {n}-line file.", steps)


@family("text_awk_sum")
def _awk_sum(rng: random.Random) -> TaskSpec:
    lines, _ = _csv(rng, rng.randint(3, 6))
    files = {"scores.csv": lines_file(lines)}
    steps = [
        ok("awk -F, 'NR > 1 { s += $3 } END { print s }' scores.csv"),
        ok("awk -F, 'NR > 1 { s += $3; n++ } END { printf \"%.1f\\n\", s / n }' scores.csv"),
        bad("awk -F, 'NR > 1 { print $1 ' scores.csv"),
        ok("awk -F, 'NR > 1 && $3 >= 50 { print $1 }' scores.csv"),
    ]
    return TaskSpec("Sum and average the scores column with awk.", steps, files)


@family("text_sed_edit")
def _sed_edit(rng: random.Random) -> TaskSpec:
    key = rng.choice(("mode", "level", "color", "region"))
    old, new = words(rng, 2)
    port = rng.randint(1000, 9999)
    files = {"app.conf": lines_file([f"{key}={old}", f"port={port}", "debug=false"])}
    steps = [
        ok(f"sed 's/{old}/{new}/' app.conf"),
        bad(f"sed -i 's/{old}/{new}' app.conf"),
        ok(f"sed -i 's/^{key}=.*/{key}={new}/' app.conf && cat app.conf"),
        ok("sed -n '/port/p' app.conf"),
        ok(f"grep -c {old} app.conf"),
    ]
    return TaskSpec(f"Change {key} to {new} in app.conf.", steps, files)


@family("text_tr_case")
def _tr(rng: random.Random) -> TaskSpec:
    text = " ".join(words(rng, rng.randint(3, 5)))
    steps = [
        ok(f"echo '{text}' > words.txt"),
        ok("tr a-z A-Z < words.txt"),
        ok("tr ' ' '\\n' < words.txt | sort"),
        bad("tr < words.txt"),
        ok("tr -d aeiou < words.txt"),
    ]
    return TaskSpec("Transform a line of words with tr.", steps)


@family("text_find_xargs")
def _find_xargs(rng: random.Random) -> TaskSpec:
    d = rng.choice(("logs", "var", "out"))
    names = words(rng, rng.randint(2, 4))
    files = {
        f"{d}/{n}.log": lines_file([f"line {i}" for i in range(rng.randint(1, 5))]) for n in names
    }
    word = rng.choice(("line 0", "line 2"))
    steps = [
        ok(f"find {d} -name '*.log' | sort"),
        ok(f"find {d} -name '*.log' | sort | xargs wc -l"),
        ok(f"find {d} -name '*.log' | xargs grep -l '{word}' | sort"),
        bad(f"find {d} -name '*.log' | xargs grpe '{word}'"),
        bad(f"find {d} -name '*.log' -exec wc -l {{}}"),
    ]
    return TaskSpec(f"Count the lines of the log files under {d}/.", steps, files)


@family("text_word_freq")
def _word_freq(rng: random.Random) -> TaskSpec:
    pool = words(rng, 5)
    text = [" ".join(rng.choice(pool) for _ in range(rng.randint(3, 6))) for _ in range(3)]
    files = {"text.txt": lines_file(text)}
    k = rng.randint(1, 3)
    steps = [
        ok("cat text.txt"),
        ok(f"tr ' ' '\\n' < text.txt | sort | uniq -c | sort -rn | head -n {k}"),
        bad("tr ' ' '\\n' text.txt | sort | uniq -c"),
        ok("wc -w < text.txt"),
    ]
    return TaskSpec("Find the most frequent words of text.txt.", steps, files)


@family("redir_append")
def _redir_append(rng: random.Random) -> TaskSpec:
    a, b, c = words(rng, 3)
    steps = [
        ok(f"echo {a} > list.txt"),
        ok(f"echo {b} >> list.txt && echo {c} >> list.txt"),
        ok("cat list.txt"),
        ok(f"echo {a} > list.txt && cat list.txt"),
        bad("cat list.text 2> err.txt"),
        ok("cat err.txt"),
    ]
    return TaskSpec("Build a list with > and >>, and keep an error message in a file.", steps)


@family("redir_stderr")
def _redir_stderr(rng: random.Random) -> TaskSpec:
    there = rng.choice(words(rng, 3))
    gone = rng.choice([w for w in words(rng, 5) if w != there])
    files = {f"{there}.txt": f"{there}\n"}
    steps = [
        bad(f"ls {there}.txt {gone}.txt"),
        bad(f"ls {there}.txt {gone}.txt > out.txt 2>&1"),
        ok("cat out.txt"),
        ok(f"ls {gone}.txt 2>/dev/null || echo 'no {gone}'"),
        ok(f"ls {there}.txt {gone}.txt 2>/dev/null | wc -l"),
    ]
    return TaskSpec("Separate normal output from error messages.", steps, files)


@family("redir_heredoc_tee")
def _heredoc(rng: random.Random) -> TaskSpec:
    items = words(rng, rng.randint(2, 4))
    body = "\n".join(items)
    extra = rng.choice(words(rng, 6))
    steps = [
        ok(f"cat > list.txt <<'EOF'\n{body}\nEOF"),
        ok(f"echo {extra} | tee -a list.txt"),
        ok("sort list.txt | tee sorted.txt | head -n 2"),
        bad("tee -q x.txt < list.txt"),
        ok("wc -l list.txt sorted.txt"),
    ]
    return TaskSpec("Write a list with a here-document and copy output with tee.", steps)


@family("text_paste_join")
def _paste_join(rng: random.Random) -> TaskSpec:
    names = sorted(pick(rng, NAMES, rng.randint(3, 5)))
    ages = [str(rng.randint(18, 80)) for _ in names]
    cities = [rng.choice(CITIES) for _ in names]
    files = {
        "ages.txt": lines_file(f"{n} {a}" for n, a in zip(names, ages, strict=True)),
        "cities.txt": lines_file(f"{n} {c}" for n, c in zip(names, cities, strict=True)),
    }
    steps = [
        ok("join ages.txt cities.txt"),
        ok("paste -d, ages.txt cities.txt"),
        bad("join ages.txt"),
        ok("cut -d' ' -f2 ages.txt | paste -sd+ | bc"),
    ]
    return TaskSpec("Combine the ages and cities lists by name.", steps, files)


@family("text_nl_rev")
def _nl_rev(rng: random.Random) -> TaskSpec:
    items = words(rng, rng.randint(3, 5))
    files = {"w.txt": lines_file(items)}
    steps = [
        ok("nl -ba w.txt"),
        ok("rev w.txt"),
        ok("tac w.txt | head -n 2"),
        bad("nl -z w.txt"),
    ]
    return TaskSpec("Number, reverse and flip the lines of w.txt.", steps, files)


@family("text_jq_json")
def _jq(rng: random.Random) -> TaskSpec:
    items = [{"name": w, "qty": rng.randint(1, 9)} for w in words(rng, rng.randint(2, 4))]
    doc = {"owner": rng.choice(NAMES), "items": items}
    files = {"order.json": json.dumps(doc) + "\n"}
    steps = [
        ok("jq -r .owner order.json"),
        ok("jq '.items | length' order.json"),
        ok("jq -r '.items[] | \"\\(.name) \\(.qty)\"' order.json"),
        bad("jq '.items[' order.json"),
        ok("jq '[.items[].qty] | add' order.json"),
    ]
    return TaskSpec("Read fields of order.json with jq.", steps, files)


@family("text_grep_regex")
def _grep_regex(rng: random.Random) -> TaskSpec:
    users = pick(rng, NAMES, rng.randint(3, 6))
    lines = [f"{u}@{rng.choice(CITIES)}.example {rng.randint(100, 999)}" for u in users]
    files = {"contacts.txt": lines_file(lines)}
    letter = users[0][0]
    steps = [
        ok(f"grep '^{letter}' contacts.txt"),
        ok("grep -oE '[0-9]{3}$' contacts.txt | sort -n | head -n 1"),
        bad("grep -E '([a-z]+' contacts.txt"),
        ok("grep -c example contacts.txt"),
    ]
    return TaskSpec("Search contacts.txt with regular expressions.", steps, files)
