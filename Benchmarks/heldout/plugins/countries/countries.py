#!/usr/bin/env python3
"""Held-out eval plugin: countryFacts -- population, area and a few codes of 36 countries.

Reads one toolhost request on stdin, writes one reply object on stdout. Figures are the table below (rounded
mid-2024 estimates); there are no capitals, languages or leaders in it. Standard library only.
"""

import difflib
import json
import sys
import unicodedata

# name, alpha-2, alpha-3, other names, population, area km², currency, calling code, continent
TABLE = [
    ("Argentina", "AR", "ARG", ["Argentine Republic"], 45_696_000, 2_780_400, "ARS", "+54", "South America"),
    ("Australia", "AU", "AUS", [], 27_204_000, 7_692_024, "AUD", "+61", "Oceania"),
    ("Brazil", "BR", "BRA", ["Brasil"], 211_998_000, 8_515_767, "BRL", "+55", "South America"),
    ("Canada", "CA", "CAN", [], 41_288_000, 9_984_670, "CAD", "+1", "North America"),
    ("Chile", "CL", "CHL", [], 19_765_000, 756_102, "CLP", "+56", "South America"),
    ("China", "CN", "CHN", ["People's Republic of China", "PRC"], 1_419_321_000, 9_596_961, "CNY", "+86", "Asia"),
    ("Colombia", "CO", "COL", [], 52_886_000, 1_141_748, "COP", "+57", "South America"),
    ("Egypt", "EG", "EGY", ["Misr"], 116_538_000, 1_002_450, "EGP", "+20", "Africa"),
    ("France", "FR", "FRA", ["Frankreich", "Francia"], 66_549_000, 551_695, "EUR", "+33", "Europe"),
    ("Germany", "DE", "DEU", ["Deutschland", "Allemagne", "Alemania", "Germania", "Alemanha"], 84_552_000,
     357_588, "EUR", "+49", "Europe"),
    ("Ghana", "GH", "GHA", [], 34_428_000, 238_533, "GHS", "+233", "Africa"),
    ("Iceland", "IS", "ISL", ["Ísland"], 393_000, 103_000, "ISK", "+354", "Europe"),
    ("India", "IN", "IND", ["Bharat"], 1_450_936_000, 3_287_263, "INR", "+91", "Asia"),
    ("Indonesia", "ID", "IDN", [], 283_488_000, 1_904_569, "IDR", "+62", "Asia"),
    ("Italy", "IT", "ITA", ["Italia", "Italien", "Italie"], 59_343_000, 302_073, "EUR", "+39", "Europe"),
    ("Japan", "JP", "JPN", ["Nippon", "Nihon", "Japon", "Giappone", "日本"], 123_753_000, 377_975, "JPY", "+81",
     "Asia"),
    ("Kenya", "KE", "KEN", [], 56_433_000, 580_367, "KES", "+254", "Africa"),
    ("Mexico", "MX", "MEX", ["México", "Mexique", "Mexiko", "Messico"], 130_861_000, 1_964_375, "MXN", "+52",
     "North America"),
    ("Morocco", "MA", "MAR", ["Maroc", "Marruecos", "Marokko"], 38_081_000, 446_550, "MAD", "+212", "Africa"),
    ("Netherlands", "NL", "NLD", ["Holland", "The Netherlands", "Nederland", "Niederlande", "Pays-Bas"],
     18_229_000, 41_850, "EUR", "+31", "Europe"),
    ("New Zealand", "NZ", "NZL", ["Aotearoa"], 5_214_000, 268_021, "NZD", "+64", "Oceania"),
    ("Nigeria", "NG", "NGA", [], 232_679_000, 923_768, "NGN", "+234", "Africa"),
    ("Norway", "NO", "NOR", ["Norge", "Norwegen", "Norvège", "Noruega"], 5_576_000, 385_207, "NOK", "+47",
     "Europe"),
    ("Peru", "PE", "PER", ["Perú", "Pérou"], 34_218_000, 1_285_216, "PEN", "+51", "South America"),
    ("Philippines", "PH", "PHL", ["Pilipinas"], 115_844_000, 300_000, "PHP", "+63", "Asia"),
    ("Poland", "PL", "POL", ["Polska", "Polen", "Pologne"], 38_540_000, 312_696, "PLN", "+48", "Europe"),
    ("Portugal", "PT", "PRT", [], 10_426_000, 92_212, "EUR", "+351", "Europe"),
    ("South Africa", "ZA", "ZAF", ["RSA", "Südafrika", "Afrique du Sud", "Sudáfrica"], 64_007_000, 1_221_037,
     "ZAR", "+27", "Africa"),
    ("South Korea", "KR", "KOR", ["Korea", "Republic of Korea", "Südkorea", "Corée du Sud", "Corea del Sur",
                                  "韓国"], 51_717_000, 100_363, "KRW", "+82", "Asia"),
    ("Spain", "ES", "ESP", ["España", "Spanien", "Espagne", "Spagna", "Espanha"], 48_797_000, 505_990, "EUR",
     "+34", "Europe"),
    ("Sweden", "SE", "SWE", ["Sverige", "Schweden", "Suède", "Suecia"], 10_606_000, 450_295, "SEK", "+46",
     "Europe"),
    ("Switzerland", "CH", "CHE", ["Schweiz", "Suisse", "Svizzera", "Suiza", "Suíça"], 8_921_000, 41_285, "CHF",
     "+41", "Europe"),
    ("Thailand", "TH", "THA", ["Thai", "Prathet Thai"], 71_668_000, 513_120, "THB", "+66", "Asia"),
    ("United Kingdom", "GB", "GBR", ["UK", "Britain", "Great Britain", "England"], 69_138_000, 242_495, "GBP",
     "+44", "Europe"),
    ("United States", "US", "USA", ["United States of America", "America", "Estados Unidos", "États-Unis",
                                    "Vereinigte Staaten"], 340_111_000, 9_833_517, "USD", "+1", "North America"),
    ("Vietnam", "VN", "VNM", ["Viet Nam"], 100_988_000, 331_212, "VND", "+84", "Asia"),
]

FIELDS = ["population", "area", "density", "currency", "callingCode", "continent"]


class ToolError(Exception):
    def __init__(self, message, code, data=None):
        super().__init__(message)
        self.message, self.code, self.data = message, code, data


def key(text):
    decomposed = unicodedata.normalize("NFKD", text)
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
                    .replace(".", "").replace("-", " ").split())


INDEX = {}
for row in TABLE:
    for name in [row[0], row[1], row[2], *row[3]]:
        INDEX.setdefault(key(name), row)


def country_facts(args):
    asked = args.get("country")
    if not isinstance(asked, str) or len(asked.strip()) < 2:
        raise ToolError("country must be an ISO 3166 code or a country's name.", "invalid_arguments")
    row = INDEX.get(key(asked))
    if row is None and key(asked).startswith("the "):
        row = INDEX.get(key(asked)[4:])
    if row is None:
        names = {key(r[0]): r[0] for r in TABLE}
        close = [names[k] for k in difflib.get_close_matches(key(asked), list(names), n=3, cutoff=0.7)]
        hint = ("Did you mean " + " or ".join(close) + "? ") if close else ""
        raise ToolError(
            f"Unknown country '{asked.strip()}'. {hint}The table covers "
            + ", ".join(f"{r[0]} ({r[1]})" for r in TABLE) + ".",
            "unknown_country", {"suggestions": close, "known": [r[0] for r in TABLE]})
    fields = args.get("fields") or FIELDS
    if not isinstance(fields, list) or any(f not in FIELDS for f in fields):
        raise ToolError(f"fields must be a list of {', '.join(FIELDS)}.", "invalid_arguments")
    name, a2, a3, _, population, area, currency, calling, continent = row
    facts = {
        "population": population,
        "area": area,
        "density": round(population / area, 1),
        "currency": currency,
        "callingCode": calling,
        "continent": continent,
    }
    result = {"country": name, "alpha2": a2, "alpha3": a3, "populationYear": 2024}
    result.update({f: facts[f] for f in FIELDS if f in fields})
    parts = []
    if "population" in fields:
        parts.append(f"population {population:,} (2024 estimate)")
    if "area" in fields:
        parts.append(f"area {area:,} km²")
    if "density" in fields:
        parts.append(f"{facts['density']} people per km²")
    if "currency" in fields:
        parts.append(f"currency {currency}")
    if "callingCode" in fields:
        parts.append(f"calling code {calling}")
    if "continent" in fields:
        parts.append(continent)
    return result, f"{name} ({a3}): " + "; ".join(parts) + "."


TOOLS = {"countryFacts": country_facts}


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
