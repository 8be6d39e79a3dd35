"""A tool's whole description read for deleting effects (issue 46).

A reading tool that says, anywhere in its description, that it deletes
("Returns the status and deletes all cached records", "Messages are deleted
once read", "This action cannot be undone") is not read-only. The description
is read clause by clause (split at punctuation and at ``and``/``but``/``then``),
so a negation only cancels the effect in its own clause: "never deletes
anything" reads nothing, "never fails, and deletes all records" deletes.

What counts: a deleting verb said as the tool's doing (``deletes``,
``removing``, ``purge``, ``cleans up``, ``wipes``, ``empties``...); the passive
of what *will* happen (``will be removed``, ``are deleted``, ``gets purged``;
not ``were deleted``, which describes what a reading tool lists); ``drops`` and
``truncates`` only with a table-like object (``truncates the log table``, not
"the output is truncated"); "performs/triggers/schedules ... deletion";
"cannot be undone", "irreversible", "destructive" (not "non-destructive").
A description longer than 64 KiB is not read and counts as deleting. A
sentence that points at another tool ("to remove it, use delete_item") says
nothing about this one.
"""

from __future__ import annotations

import re

__all__ = ["described_deletion"]

_MAX = 65_536  # a longer description is not read: it may say anything

_ACTIVE = (
    r"delet(?:e|es|ing)|remov(?:e|es|ing)|purg(?:e|es|ing)|destroy(?:s|ing)?|wip(?:e|es|ing)"
    r"|eras(?:e|es|ing)|unlink(?:s|ing)?|expung(?:e|es|ing)|shred(?:s|ding)?"
    r"|obliterat(?:e|es|ing)|nuk(?:e|es|ing)|discard(?:s|ing)?|prun(?:e|es|ing)"
    r"|clean(?:s|ing)?\s+up|cleanup|empties|emptying|flush(?:es|ing)|clears|clearing"
)
_OBJECT = (  # what "drops"/"truncates" must name to delete (not "truncates long lines")
    r"(?:tables?|databases?|collections?|index|indexes|schemas?|queues?|caches?|buckets?"
    r"|everything)"
)
_PASSIVE = (
    r"(?:will|would|shall|is|are|gets?|getting)\s+(?:also\s+|then\s+|all\s+)?(?:be\s+)?"
    r"(?:\w+ly\s+)?(?:deleted|removed|purged|destroyed|wiped|erased|unlinked|expunged"
    r"|shredded|obliterated|nuked|discarded|pruned|emptied)"
)
_DELETING = re.compile(
    rf"\b(?:{_ACTIVE})\b"
    rf"|\b{_PASSIVE}\b"
    rf"|\b(?:drop(?:s|ping)?|truncat(?:e|es|ing))\s+(?:\w+\s+){{0,2}}?{_OBJECT}\b"
    r"|\b(?:performs?|triggers?|causes?|initiates?|starts?|runs?|schedules?|executes?|does)"
    r"\s+(?:an?\s+|the\s+)?(?:\w+\s+)?(?:deletion|removal|purge|erasure|destruction|wipe)\b"
    r"|\bcan(?:not|'t|\s+not)\s+be\s+(?:undone|reversed|recovered)\b"
    r"|\birrevers(?:ible|ibly)\b|\birrevoca(?:ble|bly)\b|\bunrecoverabl[ey]\b"
    r"|(?<![-\w])destructive\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"[.;!?\n]+(?:\s|\Z)|\n")
_CLAUSE = re.compile(r"[;:()\[\],]|\s[-\u2013\u2014]\s|\b(?:and|but|then|while|whereas)\b", re.I)
_NEGATION = re.compile(
    r"\b(?:not|never|no|without|nor|cannot|none|nothing|neither|instead\s+of|rather\s+than"
    r"|non)\b|n't\b",
    re.IGNORECASE,
)
_NOTHING_AFTER = re.compile(r"\s+(?:nothing|no\b|none\b)", re.IGNORECASE)
_SELF_NEGATING = re.compile(r"\bcan(?:not|'t|\s+not)\s+be\b", re.IGNORECASE)
# "To remove a file, use delete_file": the deleting is another tool's.
_OTHER_TOOL = re.compile(r"\b(?:use|call|see|via)\s+`?[A-Za-z]\w*_\w+", re.IGNORECASE)


def described_deletion(description: str) -> str | None:
    """The words of ``description`` that say the tool deletes data, or ``None``."""
    if len(description) > _MAX:
        return f"a description too long to read ({len(description)} characters)"
    for sentence in _SENTENCE.split(description):
        if _OTHER_TOOL.search(sentence):
            continue
        for clause in _CLAUSE.split(sentence):
            for m in _DELETING.finditer(clause):
                said = m.group(0)
                if _SELF_NEGATING.match(said) or not (
                    _NEGATION.search(clause[: m.start()]) or _NOTHING_AFTER.match(clause[m.end() :])
                ):
                    return " ".join(said.split())
    return None
