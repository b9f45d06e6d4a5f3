#!/usr/bin/env python3
"""Held-out eval plugin: addNote, searchNotes, deleteNote -- the user's notebook.

Reads one toolhost request on stdin, writes one reply object on stdout. The notebook starts as the notes of the
table below; what the user adds or deletes is kept in notes.json under $HELDOUT_DATA_DIR, by default
~/.local/share/toolhost-heldout (so a fresh HOME starts from the table again). Writes hold a lock and replace the
file whole. Standard library only.
"""

import datetime
import fcntl
import json
import os
import re
import sys
import tempfile
import unicodedata

SEED = [
    {"id": "N-101", "title": "Wi-Fi at the cabin", "text": "Network Birchwood-5G, password pine-cone-42.",
     "tags": ["home", "cabin"], "created": "2026-09-14T18:22:00Z"},
    {"id": "N-102", "title": "Bike lock code", "text": "The combination is 3-8-1-5 (the blue U-lock).",
     "tags": ["bike"], "created": "2026-10-02T07:45:00Z"},
    {"id": "N-103", "title": "Gift ideas for Dad", "text": "Fly-fishing book, espresso cups, a wool scarf.",
     "tags": ["gifts", "family"], "created": "2026-10-19T20:10:00Z"},
    {"id": "N-104", "title": "Book club picks", "text": "December: The Left Hand of Darkness. January: Piranesi.",
     "tags": ["books"], "created": "2026-11-03T21:05:00Z"},
    {"id": "N-105", "title": "Parking at the office", "text": "Level P3, spot 47, next to the blue lift.",
     "tags": ["car", "work"], "created": "2026-11-10T08:31:00Z"},
    {"id": "N-106", "title": "Plant watering", "text": "Fern twice a week, cactus every three weeks, orchid on Sundays.",
     "tags": ["home", "plants"], "created": "2026-11-18T12:00:00Z"},
    {"id": "N-107", "title": "Passport renewal", "text": "Photos done. Mail form DS-82 with the old passport by 15 December.",
     "tags": ["travel", "admin"], "created": "2026-11-24T17:48:00Z"},
]

ID = re.compile(r"^N-\d{3}$")
TAG = re.compile(r"^[a-z0-9-]{1,30}$")


class ToolError(Exception):
    def __init__(self, message, code, data=None):
        super().__init__(message)
        self.message, self.code, self.data = message, code, data


def data_dir():
    return os.environ.get("HELDOUT_DATA_DIR") or os.path.join(os.path.expanduser("~"), ".local", "share",
                                                              "toolhost-heldout")


def state_file():
    return os.path.join(data_dir(), "notes.json")


def load():
    try:
        with open(state_file(), encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return {"notes": [dict(n) for n in SEED], "nextId": 108}
    except (OSError, ValueError) as e:
        raise ToolError(f"The notebook {state_file()} cannot be read ({e}).", "notes_unavailable") from e


class Locked:
    """The notebook under an exclusive lock, saved on success."""

    def __enter__(self):
        os.makedirs(data_dir(), exist_ok=True)
        self.lock = open(state_file() + ".lock", "w")
        fcntl.flock(self.lock, fcntl.LOCK_EX)
        self.state = load()
        return self.state

    def __exit__(self, kind, value, traceback):
        try:
            if kind is None:
                fd, tmp = tempfile.mkstemp(dir=data_dir(), prefix=".notes-")
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(self.state, f, ensure_ascii=False, indent=1)
                os.replace(tmp, state_file())
        finally:
            self.lock.close()
        return False


def fold(text):
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def line(n):
    tags = f" [{', '.join(n['tags'])}]" if n["tags"] else ""
    return f"{n['id']} {n['title']}{tags} ({n['created'][:10]}): {n['text']}"


def add_note(args):
    text = args.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ToolError("text must be a non-empty string.", "invalid_arguments")
    title = args.get("title")
    if title is None:
        words = text.split()
        title = " ".join(words[:6]).rstrip(".") + ("…" if len(words) > 6 else "")
    if not isinstance(title, str) or not title.strip():
        raise ToolError("title must be a non-empty string.", "invalid_arguments")
    tags = args.get("tags", [])
    if not isinstance(tags, list) or any(not isinstance(t, str) or not TAG.match(t) for t in tags):
        raise ToolError("tags must be a list of lower-case words (a-z, 0-9 and -).", "invalid_arguments")
    with Locked() as state:
        note = {"id": f"N-{state['nextId']}", "title": title.strip()[:120], "text": text.strip(),
                "tags": list(dict.fromkeys(tags)),
                "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
        state["nextId"] += 1
        state["notes"].append(note)
    return {"saved": note}, f"Saved {line(note)}"


def parse_since(value):
    if not isinstance(value, str):
        raise ValueError
    v = value.strip()
    if re.match(r"^\d{4}-\d{2}-\d{2}$", v):
        v += "T00:00:00+00:00"
    v = re.sub(r"[zZ]$", "+00:00", v)
    moment = datetime.datetime.fromisoformat(v)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment


def search_notes(args):
    limit = args.get("limit", 10)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 50:
        raise ToolError("limit must be an integer from 1 to 50.", "invalid_arguments")
    query = args.get("query", "")
    if not isinstance(query, str):
        raise ToolError("query must be a string.", "invalid_arguments")
    tag = args.get("tag")
    since = None
    if "since" in args:
        try:
            since = parse_since(args["since"])
        except ValueError:
            raise ToolError(f"since must be a date-time like 2026-11-01T00:00:00Z; got {args['since']!r}.",
                            "invalid_arguments") from None
    words = [fold(w) for w in re.findall(r"\w+", query)]
    found = []
    for n in load()["notes"]:
        hay = fold(" ".join([n["title"], n["text"], *n["tags"]]))
        if any(w not in hay for w in words):
            continue
        if tag is not None and fold(tag) not in n["tags"]:
            continue
        if since is not None and parse_since(n["created"]) < since:
            continue
        found.append(n)
    found.sort(key=lambda n: n["created"], reverse=True)
    shown = found[:limit]
    result = {"count": len(found), "notes": shown}
    if shown:
        text = f"{len(found)} note{'s' if len(found) != 1 else ''}:\n" + "\n".join(line(n) for n in shown)
    else:
        text = "No note matches."
    return result, text


def delete_note(args):
    wanted = args.get("noteId")
    if not isinstance(wanted, str) or not ID.match(wanted.strip().upper()):
        raise ToolError(f"noteId must look like N-123; got {wanted!r}.", "invalid_arguments")
    wanted = wanted.strip().upper()
    with Locked() as state:
        found = [n for n in state["notes"] if n["id"] == wanted]
        if not found:
            raise ToolError(
                f"No note {wanted}. The notes are: " + "; ".join(f"{n['id']} {n['title']}" for n in state["notes"])
                + ".", "unknown_note", {"known": [n["id"] for n in state["notes"]]})
        state["notes"] = [n for n in state["notes"] if n["id"] != wanted]
    return {"deleted": found[0]}, f"Deleted {found[0]['id']} {found[0]['title']}."


TOOLS = {"addNote": add_note, "searchNotes": search_notes, "deleteNote": delete_note}


def main():
    try:
        try:
            request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise ToolError(f"The request on stdin is not JSON ({e}).", "bad_request") from e
        if not isinstance(request, dict) or not isinstance(request.get("arguments"), dict):
            raise ToolError("The request has no arguments object.", "bad_request")
        handler = TOOLS.get(request.get("tool"))
        if handler is None:
            raise ToolError(f"This plugin has no tool named {request.get('tool')!r}.", "unknown_tool")
        result, text = handler(request["arguments"])
        reply, status = {"result": result, "text": text}, 0
    except ToolError as e:
        error = {"message": e.message, "code": e.code}
        if e.data is not None:
            error["data"] = e.data
        reply, status = {"error": error}, 1
    except OSError as e:
        reply, status = {"error": {"message": f"The notebook cannot be written ({e}).",
                                   "code": "notes_unavailable"}}, 1
    sys.stdout.buffer.write((json.dumps(reply, ensure_ascii=False) + "\n").encode("utf-8"))
    return status


if __name__ == "__main__":
    sys.exit(main())
