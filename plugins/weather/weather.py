#!/usr/bin/env python3
"""toolhost plugin: getWeather -- monthly climate normals for world cities.

Reads one toolhost request from stdin and writes one reply object to stdout
(see schemas/request.schema.json and schemas/reply.schema.json). The data is
the bundled climate.json; nothing here touches the network. Standard library
only.
"""

import datetime
import difflib
import json
import os
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
DATA_FILE = os.path.join(HERE, "climate.json")

MONTHS = [
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
]

# Country spellings people append after a comma ("Paris, France") that differ
# from the names in climate.json.
COUNTRY_ALIASES = {
    "usa": "United States", "us": "United States", "u s a": "United States",
    "u s": "United States", "america": "United States",
    "united states of america": "United States",
    "uk": "United Kingdom", "u k": "United Kingdom", "england": "United Kingdom",
    "great britain": "United Kingdom", "britain": "United Kingdom",
    "uae": "United Arab Emirates", "korea": "South Korea",
    "republic of korea": "South Korea", "holland": "Netherlands",
    "the netherlands": "Netherlands", "turkiye": "Turkey",
    "prc": "China", "brasil": "Brazil", "espana": "Spain", "italia": "Italy",
    "deutschland": "Germany", "nippon": "Japan", "nihon": "Japan",
}


class ToolError(Exception):
    """A failure reported to the caller as an error reply."""

    def __init__(self, message, code, data=None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.data = data


def normalize(name):
    """Case-, accent- and punctuation-insensitive form of a place name."""
    decomposed = unicodedata.normalize("NFKD", name)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    out = []
    for c in stripped.casefold():
        if c.isalnum():
            out.append(c)
        elif c in "'’`.":
            continue  # Jo'burg -> joburg, D.C. -> dc
        else:
            out.append(" ")
    return " ".join("".join(out).split())


def load_data():
    try:
        with open(DATA_FILE, encoding="utf-8") as f:
            data = json.load(f)
        cities = data["cities"]
        for c in cities:
            for key in ("high", "low", "precipitation"):
                if len(c[key]) != 12:
                    raise ValueError(f"{c['name']}: {key} needs 12 values")
        return data
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ToolError(
            f"The climate table could not be read ({e}).", "data_unavailable"
        ) from e


class CityIndex:
    def __init__(self, cities):
        self.cities = cities
        self.keys = {}  # normalized name or alias -> city
        self.countries = {}  # normalized country -> country
        for c in cities:
            for n in [c["name"], *c.get("aliases", [])]:
                self.keys.setdefault(normalize(n), c)
            self.countries[normalize(c["country"])] = c["country"]
        for alias, country in COUNTRY_ALIASES.items():
            self.countries.setdefault(alias, country)

    def _split_country(self, q):
        """("paris", "France") for "paris france"; (q, None) without a country."""
        words = q.split()
        for i in range(1, len(words)):
            tail = " ".join(words[i:])
            if tail in self.countries:
                return " ".join(words[:i]), self.countries[tail]
        return q, None

    def find(self, query):
        full = normalize(query)
        if full in self.keys:
            return self.keys[full]
        # "Boston, MA", "Paris, France": the part before the first comma.
        head, _, tail = query.partition(",")
        wanted_country = None
        if tail:
            t = normalize(tail)
            wanted_country = self.countries.get(t)
            candidate = normalize(head)
        else:
            candidate, wanted_country = self._split_country(full)
        city = self.keys.get(candidate)
        if city is None:
            return None
        if wanted_country is not None and wanted_country != city["country"]:
            return None  # "Paris, Canada": not the Paris in the table
        return city

    def suggestions(self, query, limit=3):
        """Up to limit cities whose name or alias is close to the query."""
        q = normalize(query.partition(",")[0]) or normalize(query)
        found = []
        for key in difflib.get_close_matches(q, list(self.keys), n=10, cutoff=0.7):
            if self.keys[key] not in found:
                found.append(self.keys[key])
        if not found and len(q) >= 3:
            found = [c for c in self.cities if normalize(c["name"]).startswith(q[:3])]
        return found[:limit]


def format_temperature(x):
    text = f"{x:.1f}"
    return "0.0" if text == "-0.0" else text


def format_precipitation(x, unit):
    return f"{x:.2f}" if unit == "in" else f"{x:g}"


def get_weather(args, data):
    city_name = args.get("city")
    if not isinstance(city_name, str) or not city_name.strip():
        raise ToolError("city must be a non-empty string.", "invalid_arguments")

    month = args.get("month")
    if month is None:
        month = datetime.date.today().month
    elif isinstance(month, bool) or not isinstance(month, (int, float)) \
            or month != int(month) or not 1 <= month <= 12:
        raise ToolError("month must be an integer from 1 to 12.", "invalid_arguments")
    month = int(month)

    units = args.get("units", "celsius")
    if units not in ("celsius", "fahrenheit"):
        raise ToolError('units must be "celsius" or "fahrenheit".', "invalid_arguments")

    index = CityIndex(data["cities"])
    city = index.find(city_name)
    if city is None:
        close = index.suggestions(city_name)
        suggestions = [c["name"] for c in close]
        known = sorted(c["name"] for c in data["cities"])
        if close:
            hint = "Did you mean " + " or ".join(
                f"{c['name']} ({c['country']})" for c in close) + "?"
        else:
            hint = (f"The table covers {len(known)} major world cities, "
                    "for example London, Tokyo, New York City and Sydney.")
        raise ToolError(
            f'Unknown city "{city_name.strip()}". {hint}',
            "unknown_city",
            {"suggestions": suggestions, "knownCities": known},
        )

    i = month - 1
    high, low, rain = city["high"][i], city["low"][i], city["precipitation"][i]
    if units == "fahrenheit":
        high = round(high * 9 / 5 + 32, 1)
        low = round(low * 9 / 5 + 32, 1)
        rain = round(rain / 25.4, 2)
        t_unit, p_unit = "°F", "in"
    else:
        t_unit, p_unit = "°C", "mm"

    result = {
        "city": city["name"],
        "country": city["country"],
        "month": month,
        "monthName": MONTHS[i],
        "units": units,
        "averageHigh": high,
        "averageLow": low,
        "precipitation": rain,
        "temperatureUnit": t_unit,
        "precipitationUnit": p_unit,
        "period": city["period"],
        "note": "Long-term monthly averages (climate normals), not a forecast.",
        "source": data.get("source", ""),
    }
    text = (
        f"{city['name']}, {city['country']} — {MONTHS[i]} normals: "
        f"high {format_temperature(high)} {t_unit}, low {format_temperature(low)} {t_unit}, "
        f"precipitation {format_precipitation(rain, p_unit)} {p_unit} "
        f"({city['period']} normals)"
    )
    return result, text


def main():
    try:
        try:
            request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise ToolError(f"The request on stdin is not JSON ({e}).", "bad_request") from e
        if not isinstance(request, dict) or not isinstance(request.get("arguments"), dict):
            raise ToolError("The request has no arguments object.", "bad_request")
        tool = request.get("tool")
        if tool != "getWeather":
            raise ToolError(f"This plugin has no tool named {tool!r}.", "unknown_tool")
        result, text = get_weather(request["arguments"], load_data())
        reply, status = {"result": result, "text": text}, 0
    except ToolError as e:
        error = {"message": e.message, "code": e.code}
        if e.data is not None:
            error["data"] = e.data
        reply, status = {"error": error}, 1
    out = json.dumps(reply, ensure_ascii=False) + "\n"
    sys.stdout.buffer.write(out.encode("utf-8"))
    sys.stdout.buffer.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
