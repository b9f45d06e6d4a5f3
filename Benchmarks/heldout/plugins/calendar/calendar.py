#!/usr/bin/env python3
"""Held-out eval plugin: listEvents, addEvent, deleteEvent -- the user's calendar.

Reads one toolhost request on stdin, writes one reply object on stdout. The calendar starts as the events of the
table below; what the user adds or deletes is kept in calendar.json under $HELDOUT_DATA_DIR, by default
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

SEED = [
    {"id": "EV-1001", "title": "Team stand-up", "date": "2026-11-30", "start": "09:00", "durationMinutes": 30,
     "location": "Room 4B"},
    {"id": "EV-1002", "title": "Lunch with Priya", "date": "2026-12-01", "start": "12:30", "durationMinutes": 60,
     "location": "Café Lumen"},
    {"id": "EV-1003", "title": "Dentist check-up", "date": "2026-12-01", "start": "16:00", "durationMinutes": 45,
     "location": "Dr. Okafor, 12 Elm Street"},
    {"id": "EV-1004", "title": "Quarterly planning", "date": "2026-12-03", "start": "10:00", "durationMinutes": 90,
     "location": "Room 2A"},
    {"id": "EV-1005", "title": "Concert: Nordic Strings", "date": "2026-12-04", "start": "19:30",
     "durationMinutes": 150, "location": "City Hall"},
    {"id": "EV-1006", "title": "Car inspection", "date": "2026-12-08", "start": "08:15", "durationMinutes": 30,
     "location": "AutoCheck Garage"},
    {"id": "EV-1007", "title": "Interview with M. Duarte", "date": "2026-12-10", "start": "14:00",
     "durationMinutes": 60, "location": "Video call"},
    {"id": "EV-1008", "title": "Sofia's birthday brunch", "date": "2026-12-12", "start": "11:00",
     "durationMinutes": 120, "location": "Greenhouse Bistro"},
    {"id": "EV-1009", "title": "Performance review", "date": "2026-12-15", "start": "09:30", "durationMinutes": 60,
     "location": "Room 4B"},
    {"id": "EV-1010", "title": "Office holiday party", "date": "2026-12-18", "start": "18:00",
     "durationMinutes": 180, "location": "Riverside Hall"},
]

DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
TIME = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)(:[0-5]\d(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$", re.IGNORECASE)
ID = re.compile(r"^EV-\d{4}$")


class ToolError(Exception):
    def __init__(self, message, code, data=None):
        super().__init__(message)
        self.message, self.code, self.data = message, code, data


def data_dir():
    return os.environ.get("HELDOUT_DATA_DIR") or os.path.join(os.path.expanduser("~"), ".local", "share",
                                                              "toolhost-heldout")


def state_file():
    return os.path.join(data_dir(), "calendar.json")


def load():
    try:
        with open(state_file(), encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return {"events": [dict(e) for e in SEED], "nextId": 1011}
    except (OSError, ValueError) as e:
        raise ToolError(f"The calendar file {state_file()} cannot be read ({e}).", "calendar_unavailable") from e


class Locked:
    """The calendar under an exclusive lock, saved on success."""

    def __enter__(self):
        os.makedirs(data_dir(), exist_ok=True)
        self.lock = open(state_file() + ".lock", "w")
        fcntl.flock(self.lock, fcntl.LOCK_EX)
        self.state = load()
        return self.state

    def __exit__(self, kind, value, traceback):
        try:
            if kind is None:
                fd, tmp = tempfile.mkstemp(dir=data_dir(), prefix=".calendar-")
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(self.state, f, ensure_ascii=False, indent=1)
                os.replace(tmp, state_file())
        finally:
            self.lock.close()
        return False


def parse_date(value, key):
    try:
        if not isinstance(value, str) or not DATE.match(value):
            raise ValueError
        return datetime.date.fromisoformat(value)
    except ValueError:
        raise ToolError(f"{key} must be a calendar date written YYYY-MM-DD, e.g. 2026-12-03; got {value!r}.",
                        "invalid_arguments") from None


def parse_time(value):
    m = TIME.match(value) if isinstance(value, str) else None
    if not m:
        raise ToolError(f"start must be a 24-hour time HH:MM, e.g. 14:30; got {value!r}.", "invalid_arguments")
    return f"{int(m.group(1)):02d}:{m.group(2)}"


def end_of(event):
    h, m = map(int, event["start"].split(":"))
    total = h * 60 + m + event["durationMinutes"]
    return f"{(total // 60) % 24:02d}:{total % 60:02d}"


def minutes(hhmm):
    h, m = map(int, hhmm.split(":"))
    return h * 60 + m


def line(e):
    day = datetime.date.fromisoformat(e["date"])
    place = f" ({e['location']})" if e.get("location") else ""
    return f"{day.strftime('%a')} {e['date']} {e['start']}–{end_of(e)} {e['title']}{place} [{e['id']}]"


def shown(e):
    return dict(e, end=end_of(e))


def list_events(args):
    first = parse_date(args["date"], "date") if "date" in args else datetime.date.today()
    days = args.get("days", 1)
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= 31:
        raise ToolError("days must be an integer from 1 to 31.", "invalid_arguments")
    last = first + datetime.timedelta(days=days - 1)
    events = sorted((e for e in load()["events"] if first.isoformat() <= e["date"] <= last.isoformat()),
                    key=lambda e: (e["date"], e["start"]))
    span = first.isoformat() if days == 1 else f"{first.isoformat()} to {last.isoformat()}"
    result = {"from": first.isoformat(), "to": last.isoformat(), "count": len(events),
              "events": [shown(e) for e in events]}
    if events:
        text = f"{len(events)} event{'s' if len(events) != 1 else ''} on {span}:\n" + "\n".join(line(e) for e in events)
    else:
        text = f"No events on {span}."
    return result, text


def add_event(args):
    title = args.get("title")
    if not isinstance(title, str) or not title.strip():
        raise ToolError("title must be a non-empty string.", "invalid_arguments")
    day = parse_date(args.get("date"), "date")
    start = parse_time(args.get("start"))
    duration = args.get("durationMinutes", 60)
    if isinstance(duration, bool) or not isinstance(duration, int) or not 5 <= duration <= 1440:
        raise ToolError("durationMinutes must be an integer from 5 to 1440.", "invalid_arguments")
    with Locked() as state:
        event = {"id": f"EV-{state['nextId']}", "title": title.strip(), "date": day.isoformat(), "start": start,
                 "durationMinutes": duration}
        if isinstance(args.get("location"), str) and args["location"].strip():
            event["location"] = args["location"].strip()
        state["nextId"] += 1
        begin, end = minutes(start), minutes(start) + duration
        overlaps = [e for e in state["events"] if e["date"] == event["date"]
                    and minutes(e["start"]) < end and begin < minutes(e["start"]) + e["durationMinutes"]]
        state["events"].append(event)
    result = {"added": shown(event), "overlaps": [shown(e) for e in overlaps]}
    text = "Added " + line(event) + "."
    if overlaps:
        text += " It overlaps " + "; ".join(line(e) for e in overlaps) + "."
    return result, text


def delete_event(args):
    wanted = args.get("eventId")
    if not isinstance(wanted, str) or not ID.match(wanted.strip().upper()):
        raise ToolError(f"eventId must look like EV-1234; got {wanted!r}.", "invalid_arguments")
    wanted = wanted.strip().upper()
    with Locked() as state:
        found = [e for e in state["events"] if e["id"] == wanted]
        if not found:
            known = sorted(state["events"], key=lambda e: (e["date"], e["start"]))
            raise ToolError(
                f"No event {wanted} on the calendar. Its events are: "
                + "; ".join(f"{e['id']} {e['title']} ({e['date']})" for e in known) + ".",
                "unknown_event", {"known": [e["id"] for e in known]})
        state["events"] = [e for e in state["events"] if e["id"] != wanted]
    return {"deleted": shown(found[0])}, "Deleted " + line(found[0]) + "."


TOOLS = {"listEvents": list_events, "addEvent": add_event, "deleteEvent": delete_event}


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
        reply, status = {"error": {"message": f"The calendar file cannot be written ({e}).",
                                   "code": "calendar_unavailable"}}, 1
    sys.stdout.buffer.write((json.dumps(reply, ensure_ascii=False) + "\n").encode("utf-8"))
    return status


if __name__ == "__main__":
    sys.exit(main())
