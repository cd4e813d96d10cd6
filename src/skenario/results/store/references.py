"""What a user types to name a run or a sweep, and the row it means.

A run is referred to by its number, which SQLite gives it in this store file (1, 2, 3, ... never
reused); by `latest` or -1, -2, ... counting back from the newest; by its name (`run --name`), the
newest run of that name when several share it; or by one of its tags (`run --tag`), the newest run
carrying it. A name is tried before a tag; neither can read as a number or `latest` (`check_label`
refuses those). A sweep is referred to by its number, by position, or by its name.
"""

from __future__ import annotations

import json
import re
import sqlite3
import unicodedata
from typing import Any

from skenario.results.store.base import StoreError

_POSITION = re.compile(r"latest|-?[0-9]+")
"""What a reference means by position, never by name or tag: a number, `latest`, or -N counting back."""
_LARGEST_ID = 2**63 - 1  # SQLite's INTEGER; a larger number is no run


def check_label(text: str, option: str) -> str:
    """A run's name or tag as given, or a StoreError saying why it could never be referred to by it."""
    if _POSITION.fullmatch(text):
        reason = "a number or `latest` refers to runs by position, so it cannot be a name or tag"
    elif not text.strip():
        reason = "a name or tag cannot be empty"
    elif text != text.strip() or any(unicodedata.category(c) == "Cc" for c in text):
        reason = "a name or tag cannot have white space around it or control characters in it"
    else:
        return text
    raise StoreError(reason, field=option, value=text)


def tags_of(stored: Any) -> list[str]:
    """The tags of a run as the writer keeps them (a JSON list); none for anything else."""
    try:
        tags = json.loads(stored) if isinstance(stored, str | bytes) else None
    except ValueError:
        return []
    return [tag for tag in tags if isinstance(tag, str)] if isinstance(tags, list) else []


def by_position(db: sqlite3.Connection, table: str, text: str) -> int | None:
    """The id of `table`'s row that `text` names by position (`_POSITION`): its number, or `latest` and -N
    counting back from the newest; None if there is no such row."""
    if text.isdigit():
        number = int(text)
        query, value = f"SELECT id FROM {table} WHERE id = ?", number
    else:
        back = 1 if text == "latest" else -int(text)
        query, value = f"SELECT id FROM {table} ORDER BY id DESC LIMIT 1 OFFSET ?", back - 1
        number = back
    if not 1 <= number <= _LARGEST_ID:
        return None
    row = db.execute(query, (value,)).fetchone()
    return None if row is None else int(row[0])


def resolve_run(db: sqlite3.Connection, run: str | int, path: str) -> int:
    """A run id from what a user typed: its number; `latest` (or -1, -2, ... counting back); else its
    name (the newest run of that name), else one of its tags (the newest run carrying it)."""
    text = str(run).strip()
    if _POSITION.fullmatch(text):
        found = by_position(db, "runs", text)
        if found is not None:
            return found
        if text.isdigit():
            raise StoreError("no such run (see `skenario runs`)", value=text, file=path)
        back = 1 if text == "latest" else -int(text)
        reason = "the store has fewer runs" if back >= 1 else "-1 is the newest run, -2 the one before"
        raise StoreError(f"no such run: {reason}", value=text, file=path)
    row = db.execute("SELECT id FROM runs WHERE run_name = ? ORDER BY id DESC LIMIT 1", (text,)).fetchone()
    if row is not None:
        return int(row[0])
    # A cheap first sieve in SQL (the tag as JSON writes it), then the tags read for certain.
    candidates = db.execute("SELECT id, tags FROM runs WHERE instr(tags, ?) > 0 ORDER BY id DESC", (json.dumps(text),))
    for run_id, tags in candidates:
        if text in tags_of(tags):
            return int(run_id)
    raise StoreError(f"no such run: none is numbered, named or tagged {text!r} (see `skenario runs`)", file=path)


def resolve_sweep(db: sqlite3.Connection, sweep: str | int, path: str) -> int:
    """A sweep's id from what a user typed: its number, `latest` or -N counting back, or its name."""
    text = str(sweep).strip()
    if _POSITION.fullmatch(text):
        found = by_position(db, "sweeps", text)
    else:
        row = db.execute("SELECT id FROM sweeps WHERE name = ? ORDER BY id DESC LIMIT 1", (text,)).fetchone()
        found = None if row is None else int(row[0])
    if found is None:
        raise StoreError("no such sweep (see `skenario sweeps`)", value=text, file=path)
    return found
