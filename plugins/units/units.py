#!/usr/bin/env python3
"""A persistent toolhost plugin: unit conversion.

With TOOLHOST_PERSISTENT=1 (toolhost sets it for "persistent": true) it reads one request object per line on
stdin and writes one reply object per line on stdout, flushing after each, until stdin ends. Without it, it reads
one request from stdin and answers once, so it can be tried by hand:

  echo '{"toolhost":1,"tool":"convertUnits","arguments":{"value":5,"from":"mi","to":"km"},"callId":"1"}' | ./units.py
"""
import json
import os
import sys

# Factors to the kind's base unit (metre, kilogram, litre, square metre, metre per second, second).
UNITS = {
    "length": {
        ("m", "metre", "meter", "metres", "meters"): 1.0,
        ("km", "kilometre", "kilometer", "kilometres", "kilometers"): 1000.0,
        ("cm", "centimetre", "centimeter", "centimetres", "centimeters"): 0.01,
        ("mm", "millimetre", "millimeter", "millimetres", "millimeters"): 0.001,
        ("mi", "mile", "miles"): 1609.344,
        ("yd", "yard", "yards"): 0.9144,
        ("ft", "foot", "feet"): 0.3048,
        ("in", "inch", "inches"): 0.0254,
        ("nmi", "nautical mile", "nautical miles"): 1852.0,
    },
    "mass": {
        ("kg", "kilogram", "kilograms"): 1.0,
        ("g", "gram", "grams"): 0.001,
        ("mg", "milligram", "milligrams"): 1e-6,
        ("t", "tonne", "tonnes"): 1000.0,
        ("lb", "lbs", "pound", "pounds"): 0.45359237,
        ("oz", "ounce", "ounces"): 0.028349523125,
        ("st", "stone", "stones"): 6.35029318,
    },
    "volume": {
        ("l", "litre", "liter", "litres", "liters"): 1.0,
        ("ml", "millilitre", "milliliter", "millilitres", "milliliters"): 0.001,
        ("m3", "cubic metre", "cubic meter"): 1000.0,
        ("gal", "gallon", "gallons", "us gallon"): 3.785411784,
        ("qt", "quart", "quarts"): 0.946352946,
        ("pt", "pint", "pints"): 0.473176473,
        ("cup", "cups"): 0.2365882365,
        ("fl oz", "floz", "fluid ounce", "fluid ounces"): 0.0295735295625,
        ("tbsp", "tablespoon", "tablespoons"): 0.01478676478125,
        ("tsp", "teaspoon", "teaspoons"): 0.00492892159375,
    },
    "area": {
        ("m2", "square metre", "square meter"): 1.0,
        ("km2", "square kilometre", "square kilometer"): 1e6,
        ("ha", "hectare", "hectares"): 1e4,
        ("acre", "acres"): 4046.8564224,
        ("ft2", "square foot", "square feet"): 0.09290304,
        ("mi2", "square mile", "square miles"): 2589988.110336,
    },
    "speed": {
        ("m/s", "mps", "metres per second", "meters per second"): 1.0,
        ("km/h", "kmh", "kph", "kilometres per hour", "kilometers per hour"): 1000.0 / 3600.0,
        ("mph", "miles per hour"): 1609.344 / 3600.0,
        ("kn", "knot", "knots"): 1852.0 / 3600.0,
    },
    "time": {
        ("s", "sec", "second", "seconds"): 1.0,
        ("min", "minute", "minutes"): 60.0,
        ("h", "hr", "hour", "hours"): 3600.0,
        ("d", "day", "days"): 86400.0,
        ("wk", "week", "weeks"): 604800.0,
    },
}
TEMPERATURES = {
    "c": ("°C", "c", "degc", "°c", "celsius"),
    "f": ("°F", "f", "degf", "°f", "fahrenheit"),
    "k": ("K", "k", "kelvin"),
}

# Unit names in Spanish, Portuguese, French, German and Italian, by the symbol they stand for: a question asked in
# those languages names its units so ("50 libras", "10 milhas"), and so does the model's call.
NAMES_ELSEWHERE = {
    "m": ("metro", "metros", "mètre", "mètres", "metri"),
    "km": ("kilómetro", "kilómetros", "kilometro", "kilometros", "quilômetro", "quilômetros", "quilometro",
           "quilometros", "chilometro", "chilometri", "kilomètre", "kilomètres"),
    "cm": ("centímetro", "centímetros", "centimetro", "centimetros", "centimetri", "centimètre", "centimètres"),
    "mi": ("milla", "millas", "milha", "milhas", "mille", "milles", "meile", "meilen", "miglio", "miglia"),
    "ft": ("pie", "pies", "pé", "pés", "pied", "pieds", "fuß", "fuss", "piede", "piedi"),
    "in": ("pulgada", "pulgadas", "polegada", "polegadas", "pouce", "pouces", "zoll", "pollice", "pollici"),
    "kg": ("kilo", "kilos", "kilogramo", "kilogramos", "quilo", "quilos", "quilograma", "quilogramas",
           "chilogrammo", "chilogrammi", "chili", "kilogramme", "kilogrammes", "kilogramm"),
    "g": ("gramo", "gramos", "grama", "gramas", "grammo", "grammi", "gramme", "grammes", "gramm"),
    "lb": ("libra", "libras", "livre", "livres", "pfund", "libbra", "libbre"),
    "oz": ("onza", "onzas", "onça", "onças", "once", "onces", "unze", "unzen", "oncia"),
    "l": ("litro", "litros", "litre", "litri", "liter"),
    "gal": ("galón", "galones", "galão", "galões", "gallone", "galloni"),
    "cup": ("taza", "tazas", "xícara", "xícaras", "tasse", "tassen", "tazza", "tazze"),
    "tbsp": ("cucharada", "cucharadas", "colher de sopa", "colheres de sopa", "cuillère à soupe", "esslöffel",
             "cucchiaio", "cucchiai"),
    "tsp": ("cucharadita", "cucharaditas", "colher de chá", "colheres de chá", "cuillère à café", "teelöffel",
            "cucchiaino", "cucchiaini"),
    "h": ("hora", "horas", "heure", "heures", "stunde", "stunden", "ora", "ore"),
}

LOOKUP = {}
for kind, table in UNITS.items():
    for names, factor in table.items():
        for name in names:
            LOOKUP[name] = (kind, factor, names[0])
for symbol, names in NAMES_ELSEWHERE.items():
    for name in names:
        LOOKUP.setdefault(name, LOOKUP[symbol])
for key, names in TEMPERATURES.items():
    for name in names:
        LOOKUP[name.lower()] = ("temperature", key, names[0])


def find(unit):
    return LOOKUP.get(unit.strip().lower()) or LOOKUP.get(unit.strip())


def to_kelvin(value, scale):
    return {"c": value + 273.15, "f": (value - 32) * 5 / 9 + 273.15, "k": value}[scale]


def from_kelvin(value, scale):
    return {"c": value - 273.15, "f": (value - 273.15) * 9 / 5 + 32, "k": value}[scale]


def convert(arguments):
    value, src, dst = arguments["value"], arguments["from"], arguments["to"]
    a, b = find(src), find(dst)
    for unit, found in ((src, a), (dst, b)):
        if found is None:
            known = sorted({entry[2] for entry in LOOKUP.values()})
            return {"error": {"message": f"unknown unit {unit!r}", "code": "unknown_unit", "data": {"known": known}}}
    if a[0] != b[0]:
        return {"error": {"message": f"cannot convert {a[0]} ({src}) to {b[0]} ({dst})", "code": "incompatible_units"}}
    if a[0] == "temperature":
        result = from_kelvin(to_kelvin(value, a[1]), b[1])
    else:
        result = value * a[1] / b[1]
    result = float(f"{result:.10g}")
    return {
        "result": {"value": result, "unit": b[2], "input": value, "inputUnit": a[2], "kind": a[0]},
        "text": f"{value:g} {a[2]} = {result:g} {b[2]}",
    }


def answer(line):
    try:
        request = json.loads(line)
    except ValueError as e:
        return {"error": {"message": f"the request is not JSON: {e}", "code": "bad_request"}}
    if request.get("tool") != "convertUnits":
        return {"error": {"message": f"unknown tool {request.get('tool')!r}", "code": "unknown_tool"}}
    try:
        return convert(request.get("arguments") or {})
    except (KeyError, TypeError) as e:
        return {"error": {"message": f"bad arguments: {e}", "code": "invalid_arguments"}}


def main():
    if os.environ.get("TOOLHOST_PERSISTENT") == "1":
        for line in sys.stdin:
            if line.strip():
                sys.stdout.write(json.dumps(answer(line), ensure_ascii=False) + "\n")
                sys.stdout.flush()
    else:
        sys.stdout.write(json.dumps(answer(sys.stdin.read()), ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
