#!/usr/bin/env python3
"""Held-out eval plugin: findBook, searchCatalogue, placeHold -- a city library's catalogue.

Reads one toolhost request on stdin, writes one reply object on stdout. The catalogue is the table below; the
holds the user places are kept in library-holds.json under $HELDOUT_DATA_DIR, by default
~/.local/share/toolhost-heldout (so a fresh HOME has none). Standard library only.
"""

import datetime
import difflib
import fcntl
import json
import os
import re
import sys
import tempfile
import unicodedata

BRANCHES = ["central", "riverside", "northgate", "harbour"]

# ISBN-13 -> title, author, year, {branch: (copies, on the shelf)}, holds already waiting
BOOKS = {
    "9780571193417": ("Piranesi", "Susanna Clarke", 2020, {"central": (3, 0), "riverside": (1, 1)}, 2),
    "9780441478125": ("The Left Hand of Darkness", "Ursula K. Le Guin", 1969,
                      {"central": (2, 0), "northgate": (1, 0)}, 4),
    "9780553383300": ("A Wizard of Earthsea", "Ursula K. Le Guin", 1968, {"central": (2, 1), "harbour": (1, 1)}, 0),
    "9780060512750": ("The Dispossessed", "Ursula K. Le Guin", 1974, {"central": (1, 1)}, 0),
    "9780593135204": ("Project Hail Mary", "Andy Weir", 2021,
                      {"central": (4, 0), "riverside": (2, 0), "northgate": (1, 0)}, 7),
    "9780679731726": ("The Remains of the Day", "Kazuo Ishiguro", 1989, {"central": (2, 2), "harbour": (1, 0)}, 0),
    "9780571364534": ("Klara and the Sun", "Kazuo Ishiguro", 2021, {"riverside": (2, 1), "northgate": (1, 1)}, 0),
    "9780141439549": ("Middlemarch", "George Eliot", 1871, {"central": (2, 2)}, 0),
    "9780060883287": ("One Hundred Years of Solitude", "Gabriel García Márquez", 1967,
                      {"central": (2, 1), "riverside": (1, 0)}, 1),
    "9780156013031": ("The Name of the Rose", "Umberto Eco", 1980, {"central": (1, 0)}, 1),
    "9781400033416": ("Beloved", "Toni Morrison", 1987, {"central": (2, 1), "northgate": (1, 1)}, 0),
    "9780062316097": ("Sapiens: A Brief History of Humankind", "Yuval Noah Harari", 2011,
                      {"central": (3, 2), "riverside": (2, 1), "harbour": (1, 1)}, 0),
    "9780393356687": ("The Overstory", "Richard Powers", 2018, {"central": (1, 0), "harbour": (1, 0)}, 3),
    "9780399590504": ("Educated", "Tara Westover", 2018, {"riverside": (2, 2)}, 0),
    "9780547928227": ("The Hobbit", "J. R. R. Tolkien", 1937,
                      {"central": (3, 1), "riverside": (2, 2), "northgate": (2, 0), "harbour": (1, 1)}, 0),
    "9781571313560": ("Braiding Sweetgrass", "Robin Wall Kimmerer", 2013, {"northgate": (2, 0)}, 2),
}

ISBN = re.compile(r"^(97[89][0-9]{10}|[0-9]{9}[0-9X])$")


class ToolError(Exception):
    def __init__(self, message, code, data=None):
        super().__init__(message)
        self.message, self.code, self.data = message, code, data


def data_dir():
    return os.environ.get("HELDOUT_DATA_DIR") or os.path.join(os.path.expanduser("~"), ".local", "share",
                                                              "toolhost-heldout")


def state_file():
    return os.path.join(data_dir(), "library-holds.json")


def load():
    try:
        with open(state_file(), encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return {"holds": [], "nextId": 5001}
    except (OSError, ValueError) as e:
        raise ToolError(f"The holds file {state_file()} cannot be read ({e}).", "holds_unavailable") from e


def fold(text):
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def isbn13(raw):
    if not isinstance(raw, str):
        raise ToolError("isbn must be a string of 10 or 13 digits.", "invalid_arguments")
    isbn = re.sub(r"[\s-]", "", raw).upper()
    if not ISBN.match(isbn):
        raise ToolError(f"isbn must be 10 or 13 digits (hyphens left out); got {raw!r}.", "invalid_arguments")
    if len(isbn) == 10:
        body = "978" + isbn[:9]
        total = sum(int(d) * (1 if i % 2 == 0 else 3) for i, d in enumerate(body))
        isbn = body + str((10 - total % 10) % 10)
    return isbn


def book(raw):
    isbn = isbn13(raw)
    if isbn not in BOOKS:
        close = difflib.get_close_matches(isbn, list(BOOKS), n=3, cutoff=0.8)
        if close:
            hint = "Did you mean " + " or ".join(f"{c} ({BOOKS[c][0]})" for c in close) + "?"
        else:
            hint = "searchCatalogue finds a book's ISBN by its title or author."
        raise ToolError(f"No book with ISBN {isbn} in the catalogue. {hint}", "unknown_isbn",
                        {"suggestions": close})
    return isbn, BOOKS[isbn]


def summary(isbn, entry):
    title, author, year, branches, waiting = entry
    shelves = [{"branch": b, "copies": c, "onShelf": s} for b, (c, s) in branches.items()]
    return {"isbn": isbn, "title": title, "author": author, "year": year, "branches": shelves,
            "onShelf": sum(s for _, s in branches.values()), "holdsWaiting": waiting}


def shelf_text(entry):
    _, _, _, branches, waiting = entry
    parts = [f"{b} {s} of {c} on the shelf" for b, (c, s) in branches.items()]
    return "; ".join(parts) + (f"; {waiting} hold{'s' if waiting != 1 else ''} waiting" if waiting else "")


def find_book(args):
    isbn, entry = book(args.get("isbn"))
    title, author, year = entry[:3]
    return summary(isbn, entry), f"{title} by {author} ({year}), ISBN {isbn}: {shelf_text(entry)}."


def search_catalogue(args):
    query = args.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ToolError("query must be a non-empty string.", "invalid_arguments")
    words = [fold(w) for w in re.findall(r"\w+", query) if len(w) > 1 or w.isdigit()]
    available_only = args.get("availableOnly", False)
    found = []
    for isbn, entry in BOOKS.items():
        hay = fold(f"{entry[0]} {entry[1]} {entry[2]}")
        if all(w in hay for w in words) and (not available_only or any(s for _, s in entry[3].values())):
            found.append(summary(isbn, entry))
    found.sort(key=lambda b: (b["author"], b["year"]))
    if found:
        text = f"{len(found)} book{'s' if len(found) != 1 else ''}:\n" + "\n".join(
            f"{b['title']} by {b['author']} ({b['year']}), ISBN {b['isbn']}: {shelf_text(BOOKS[b['isbn']])}"
            for b in found)
    else:
        text = f"Nothing in the catalogue matches '{query.strip()}'" + (" on the shelf" if available_only else "") + "."
    return {"count": len(found), "books": found}, text


def place_hold(args):
    isbn, entry = book(args.get("isbn"))
    branch = args.get("branch", "central")
    if branch not in BRANCHES:
        raise ToolError(f"branch must be one of {', '.join(BRANCHES)}; got {branch!r}.", "invalid_arguments")
    os.makedirs(data_dir(), exist_ok=True)
    with open(state_file() + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = load()
        for h in state["holds"]:
            if h["isbn"] == isbn:
                raise ToolError(f"You already have a hold on {entry[0]}: {h['holdId']} at {h['branch']}.",
                                "already_on_hold", {"hold": h})
        copies, on_shelf = entry[3].get(branch, (0, 0))
        today = datetime.date.today()
        if on_shelf:
            position, ready = 0, today + datetime.timedelta(days=1)
        else:
            position, ready = entry[4] + 1, None
        hold = {"holdId": f"H-{state['nextId']}", "isbn": isbn, "title": entry[0], "branch": branch,
                "placed": today.isoformat(), "queuePosition": position,
                "readyFrom": ready.isoformat() if ready else None}
        state["nextId"] += 1
        state["holds"].append(hold)
        fd, tmp = tempfile.mkstemp(dir=data_dir(), prefix=".holds-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(state, f, ensure_ascii=False, indent=1)
        os.replace(tmp, state_file())
    if ready:
        text = f"Hold {hold['holdId']} placed on {entry[0]}: ready to collect at {branch} from {hold['readyFrom']}."
    else:
        text = (f"Hold {hold['holdId']} placed on {entry[0]} for pickup at {branch}: number {position} in the queue"
                + ("" if copies else f" (copies come from other branches; {branch} has none)") + ".")
    return {"hold": hold}, text


TOOLS = {"findBook": find_book, "searchCatalogue": search_catalogue, "placeHold": place_hold}


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
        reply, status = {"error": {"message": f"The holds file cannot be written ({e}).",
                                   "code": "holds_unavailable"}}, 1
    sys.stdout.buffer.write((json.dumps(reply, ensure_ascii=False) + "\n").encode("utf-8"))
    return status


if __name__ == "__main__":
    sys.exit(main())
