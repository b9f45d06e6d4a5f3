#!/usr/bin/env python3
"""Held-out eval plugin: flightStatus and airportDelays -- a made-up timetable and delay board.

Reads one toolhost request on stdin, writes one reply object on stdout. A flight's status on a day is derived from
its number and the date (the same every run); the delay board is a fixed table. Standard library only.
"""

import datetime
import difflib
import json
import re
import sys
import zlib

# flight -> airline, origin, destination, departure (local), arrival (local), days later, terminal
FLIGHTS = {
    "LH400": ("Lufthansa", "FRA", "JFK", "10:05", "12:55", 0, "1"),
    "BA117": ("British Airways", "LHR", "JFK", "08:20", "11:15", 0, "5"),
    "AF6": ("Air France", "CDG", "JFK", "10:30", "12:55", 0, "2E"),
    "KL641": ("KLM", "AMS", "JFK", "10:40", "12:45", 0, "1"),
    "UA901": ("United Airlines", "SFO", "FRA", "15:45", "11:50", 1, "I"),
    "QF1": ("Qantas", "SYD", "LHR", "15:55", "05:15", 1, "1"),
    "NH10": ("ANA", "NRT", "JFK", "11:00", "10:35", 0, "1"),
    "IB6251": ("Iberia", "MAD", "JFK", "12:05", "14:30", 0, "4S"),
    "EK203": ("Emirates", "DXB", "JFK", "08:30", "14:25", 0, "3"),
    "LX38": ("SWISS", "ZRH", "SFO", "13:00", "16:05", 0, "E"),
    "TP209": ("TAP Air Portugal", "LIS", "JFK", "10:20", "13:05", 0, "1"),
    "U21977": ("easyJet", "LGW", "BCN", "06:45", "09:50", 0, "N"),
    "DL405": ("Delta", "JFK", "ATL", "07:00", "09:25", 0, "4"),
    "AZ610": ("ITA Airways", "FCO", "JFK", "10:15", "14:10", 0, "3"),
}

AIRPORTS = {
    "FRA": ("Frankfurt", 18, 2, "congestion on the taxiways"),
    "JFK": ("New York JFK", 34, 6, "low clouds and a runway closed for works"),
    "LHR": ("London Heathrow", 22, 3, "air traffic control staffing"),
    "CDG": ("Paris Charles de Gaulle", 12, 1, "none reported"),
    "AMS": ("Amsterdam Schiphol", 27, 4, "strong crosswinds"),
    "MAD": ("Madrid Barajas", 8, 0, "none reported"),
    "SFO": ("San Francisco", 41, 9, "fog, arrivals metered"),
    "NRT": ("Tokyo Narita", 5, 0, "none reported"),
    "SYD": ("Sydney", 15, 1, "a late inbound aircraft rotation"),
    "DXB": ("Dubai", 11, 0, "none reported"),
    "ZRH": ("Zurich", 19, 2, "de-icing"),
    "LIS": ("Lisbon", 24, 2, "apron congestion"),
    "LGW": ("London Gatwick", 31, 5, "a single-runway slowdown"),
    "BCN": ("Barcelona", 9, 0, "none reported"),
    "ATL": ("Atlanta", 26, 7, "thunderstorms"),
    "FCO": ("Rome Fiumicino", 14, 1, "baggage system outage earlier today"),
    "ORD": ("Chicago O'Hare", 38, 11, "snow showers and de-icing"),
    "MUC": ("Munich", 16, 1, "de-icing"),
}

NUMBER = re.compile(r"^([A-Z0-9]{2})0*([0-9]{1,4})$")


class ToolError(Exception):
    def __init__(self, message, code, data=None):
        super().__init__(message)
        self.message, self.code, self.data = message, code, data


def shift(hhmm, minutes):
    h, m = map(int, hhmm.split(":"))
    total = h * 60 + m + minutes
    return f"{(total // 60) % 24:02d}:{total % 60:02d}", total // (24 * 60)


def flight_status(args):
    raw = args.get("flightNumber")
    m = NUMBER.match(re.sub(r"\s", "", raw).upper()) if isinstance(raw, str) else None
    if not m:
        raise ToolError(f"flightNumber must be an airline code and a number, e.g. LH400; got {raw!r}.",
                        "invalid_arguments")
    number = m.group(1) + m.group(2)
    if number not in FLIGHTS:
        close = difflib.get_close_matches(number, list(FLIGHTS), n=3, cutoff=0.6)
        hint = ("Did you mean " + " or ".join(close) + "? ") if close else ""
        raise ToolError(f"No flight {number} in the timetable. {hint}Known flights: {', '.join(sorted(FLIGHTS))}.",
                        "unknown_flight", {"suggestions": close, "known": sorted(FLIGHTS)})
    if "date" in args:
        try:
            if not isinstance(args["date"], str) or not re.match(r"^\d{4}-\d{2}-\d{2}$", args["date"]):
                raise ValueError
            day = datetime.date.fromisoformat(args["date"])
        except ValueError:
            raise ToolError(f"date must be written YYYY-MM-DD, e.g. 2026-12-04; got {args['date']!r}.",
                            "invalid_arguments") from None
    else:
        day = datetime.date.today()
    airline, origin, destination, dep, arr, later, terminal = FLIGHTS[number]
    h = zlib.crc32(f"{number}/{day.isoformat()}".encode())
    roll = h % 100
    if roll >= 96:
        state, delay = "cancelled", 0
    elif roll >= 66:
        state, delay = "delayed", 5 + (h >> 8) % 85
    else:
        state, delay = "on time", 0
    gate = "ABCDEFGH"[(h >> 16) % 8] + str(1 + (h >> 20) % 48)
    est_dep, _ = shift(dep, delay)
    est_arr, _ = shift(arr, delay)
    arrival_day = day + datetime.timedelta(days=later)
    result = {
        "flightNumber": number, "airline": airline, "date": day.isoformat(), "from": origin, "to": destination,
        "scheduledDeparture": dep, "scheduledArrival": arr, "arrivalDate": arrival_day.isoformat(),
        "status": state, "delayMinutes": delay, "terminal": terminal, "gate": None if state == "cancelled" else gate,
    }
    if state == "cancelled":
        text = f"{number} ({airline}) {origin}→{destination} on {day.isoformat()}: cancelled."
    else:
        result["estimatedDeparture"], result["estimatedArrival"] = est_dep, est_arr
        timing = "on time" if state == "on time" else f"delayed {delay} min"
        text = (f"{number} ({airline}) {origin}→{destination} on {day.isoformat()}: {timing}; departs {est_dep} "
                f"(scheduled {dep}) from terminal {terminal}, gate {gate}; arrives {est_arr} local time"
                + (f" on {arrival_day.isoformat()}" if later else "") + ".")
    return result, text


def airport_delays(args):
    code = args.get("airport")
    if not isinstance(code, str) or not re.match(r"^[A-Z]{3}$", code):
        raise ToolError(f"airport must be a three-letter IATA code, e.g. FRA; got {code!r}.", "invalid_arguments")
    if code not in AIRPORTS:
        close = difflib.get_close_matches(code, list(AIRPORTS), n=3, cutoff=0.6)
        hint = ("Did you mean " + " or ".join(close) + "? ") if close else ""
        raise ToolError(
            f"No delay board for {code}. {hint}Known airports: "
            + ", ".join(f"{c} ({AIRPORTS[c][0]})" for c in sorted(AIRPORTS)) + ".",
            "unknown_airport", {"suggestions": close, "known": sorted(AIRPORTS)})
    name, average, cancelled, cause = AIRPORTS[code]
    result = {"airport": code, "name": name, "averageDepartureDelayMinutes": average,
              "cancelledDepartures": cancelled, "cause": cause}
    text = (f"{name} ({code}): departures delayed {average} min on average, {cancelled} cancelled; "
            f"cause: {cause}.")
    return result, text


TOOLS = {"flightStatus": flight_status, "airportDelays": airport_delays}


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
    sys.stdout.buffer.write((json.dumps(reply, ensure_ascii=False) + "\n").encode("utf-8"))
    return status


if __name__ == "__main__":
    sys.exit(main())
