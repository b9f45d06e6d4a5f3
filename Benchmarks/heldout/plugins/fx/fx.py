#!/usr/bin/env python3
"""Held-out eval plugin: convertCurrency and currencyInfo -- a made-up table of daily reference rates.

Reads one toolhost request on stdin, writes one reply object on stdout. Rates are units of a currency per euro on
the latest day (LATEST); earlier days follow a fixed smooth curve, so every answer is the same from run to run.
Standard library only.
"""

import datetime
import difflib
import json
import math
import re
import sys
import zlib

LATEST = datetime.date(2026, 11, 27)
FIRST = datetime.date(2025, 1, 2)

# code -> (units per EUR on LATEST, name, symbol, minor units, countries and territories)
CURRENCIES = {
    "EUR": (1.0, "Euro", "€", 2, ["Austria", "Belgium", "France", "Germany", "Ireland", "Italy", "Netherlands",
                                  "Portugal", "Spain", "and 11 more euro-area countries"]),
    "USD": (1.1612, "US dollar", "$", 2, ["United States", "Ecuador", "El Salvador", "Panama", "Timor-Leste"]),
    "GBP": (0.8764, "Pound sterling", "£", 2, ["United Kingdom", "Isle of Man", "Jersey", "Guernsey"]),
    "JPY": (178.42, "Japanese yen", "¥", 0, ["Japan"]),
    "CHF": (0.9351, "Swiss franc", "CHF", 2, ["Switzerland", "Liechtenstein"]),
    "CAD": (1.6234, "Canadian dollar", "$", 2, ["Canada"]),
    "AUD": (1.7812, "Australian dollar", "$", 2, ["Australia", "Kiribati", "Nauru", "Tuvalu"]),
    "NZD": (2.0310, "New Zealand dollar", "$", 2, ["New Zealand", "Cook Islands", "Niue"]),
    "SEK": (10.954, "Swedish krona", "kr", 2, ["Sweden"]),
    "NOK": (11.722, "Norwegian krone", "kr", 2, ["Norway", "Svalbard"]),
    "DKK": (7.4608, "Danish krone", "kr", 2, ["Denmark", "Greenland", "Faroe Islands"]),
    "PLN": (4.2415, "Polish złoty", "zł", 2, ["Poland"]),
    "CZK": (24.218, "Czech koruna", "Kč", 2, ["Czech Republic"]),
    "HUF": (384.55, "Hungarian forint", "Ft", 2, ["Hungary"]),
    "CNY": (8.2490, "Chinese yuan renminbi", "¥", 2, ["China"]),
    "HKD": (9.0321, "Hong Kong dollar", "HK$", 2, ["Hong Kong"]),
    "SGD": (1.5107, "Singapore dollar", "S$", 2, ["Singapore", "Brunei"]),
    "INR": (102.61, "Indian rupee", "₹", 2, ["India", "Bhutan"]),
    "KRW": (1685.2, "South Korean won", "₩", 0, ["South Korea"]),
    "THB": (37.612, "Thai baht", "฿", 2, ["Thailand"]),
    "BRL": (6.2107, "Brazilian real", "R$", 2, ["Brazil"]),
    "MXN": (21.304, "Mexican peso", "$", 2, ["Mexico"]),
    "ZAR": (20.118, "South African rand", "R", 2, ["South Africa", "Lesotho", "Namibia", "Eswatini"]),
    "TRY": (49.207, "Turkish lira", "₺", 2, ["Turkey", "Northern Cyprus"]),
    "MAD": (10.734, "Moroccan dirham", "DH", 2, ["Morocco", "Western Sahara"]),
}

CODE = re.compile(r"^[A-Z]{3}$")


class ToolError(Exception):
    def __init__(self, message, code, data=None):
        super().__init__(message)
        self.message, self.code, self.data = message, code, data


def currency(args, key):
    code = args.get(key)
    if not isinstance(code, str) or not CODE.match(code):
        raise ToolError(f"{key} must be an ISO 4217 code of three capital letters, e.g. USD; got {code!r}.",
                        "invalid_arguments")
    if code not in CURRENCIES:
        close = difflib.get_close_matches(code, list(CURRENCIES), n=3, cutoff=0.6)
        hint = ("Did you mean " + " or ".join(close) + "? ") if close else ""
        raise ToolError(f"Unknown currency code {code}. {hint}Known codes: {', '.join(sorted(CURRENCIES))}.",
                        "unknown_currency", {"suggestions": close, "known": sorted(CURRENCIES)})
    return code


def rate_day(args):
    """The day whose rates apply and a note when it is not the day asked for."""
    raw = args.get("date")
    if raw is None:
        return LATEST, None
    try:
        if not isinstance(raw, str) or not re.match(r"^\d{4}-\d{2}-\d{2}$", raw):
            raise ValueError
        day = datetime.date.fromisoformat(raw)
    except ValueError:
        raise ToolError(f"date must be a calendar date written YYYY-MM-DD, e.g. 2026-03-02; got {raw!r}.",
                        "invalid_arguments") from None
    if day > LATEST:
        raise ToolError(f"No rates for {raw} yet: the latest are those of {LATEST.isoformat()}.", "no_rates")
    if day < FIRST:
        raise ToolError(f"No rates before {FIRST.isoformat()}.", "no_rates")
    note = None
    while day.weekday() >= 5:
        day -= datetime.timedelta(days=1)
        note = f"{raw} is a weekend day: the rates of Friday {day.isoformat()} apply."
    return day, note


def per_euro(code, day):
    base = CURRENCIES[code][0]
    if code == "EUR":
        return 1.0
    phase = (zlib.crc32(code.encode()) % 628) / 100
    w = 2 * math.pi / 365

    def wave(d):
        return 0.035 * math.sin(w * (d - FIRST).days + phase) + 0.012 * math.sin(3.1 * w * (d - FIRST).days)

    return base * (1 + wave(day) - wave(LATEST))


def convert_currency(args):
    amount = args.get("amount")
    if isinstance(amount, bool) or not isinstance(amount, (int, float)) or amount <= 0:
        raise ToolError("amount must be a number greater than 0.", "invalid_arguments")
    source, target = currency(args, "from"), currency(args, "to")
    day, note = rate_day(args)
    rate = per_euro(target, day) / per_euro(source, day)
    rate = float(f"{rate:.6g}")
    digits = CURRENCIES[target][3]
    converted = round(amount * rate, digits)
    if digits == 0:
        converted = int(converted)
    result = {"amount": amount, "from": source, "to": target, "rate": rate, "converted": converted,
              "date": day.isoformat()}
    shown = f"{converted:,.{digits}f}"
    given = str(int(amount)) if float(amount).is_integer() else f"{amount:.12g}"
    text = f"{given} {source} = {shown} {target} (1 {source} = {rate:g} {target}, reference rate of {day.isoformat()})"
    if note:
        result["note"] = note
        text += f". {note}"
    return result, text


def currency_info(args):
    code = currency(args, "code")
    _, name, symbol, digits, places = CURRENCIES[code]
    result = {"code": code, "name": name, "symbol": symbol, "minorUnits": digits, "usedIn": places}
    text = f"{code}: {name} ({symbol}), {digits} decimal places; used in {', '.join(places)}."
    return result, text


TOOLS = {"convertCurrency": convert_currency, "currencyInfo": currency_info}


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
