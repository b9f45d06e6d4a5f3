#!/usr/bin/env python3
"""The Python side of DifferentialTests.swift: python-jsonschema's answer for each schema and instance pair.

Reads JSON Lines, one {"schema": ..., "instance": ...} object a line, from the file named by the first argument, and
prints one line per pair, in order:

  valid
  invalid
  schema-error <pointer>: <message>   check_schema rejected the schema (the pointer is where, in the schema)
  ref-error <message>                 a $ref or $dynamicRef that designates nothing (nothing is ever retrieved)
  error <type>: <message>             anything else python-jsonschema raised

Validation is Draft 2020-12 with no format checker (`format` is an annotation). The registry has no `retrieve`, so a
reference outside the schema document is an error rather than a network request.

Exit status: 0 when every line was answered, 2 for a usage or input error, 3 when jsonschema cannot be imported or
is not the version that Tests/requirements.txt pins (the known differences in DifferentialTests.swift are that
version's).
"""

import importlib.metadata
import json
import pathlib
import sys

try:
    import referencing
    import referencing.exceptions
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
except ImportError as error:
    print(
        f"differential.py: cannot import jsonschema ({error}); run scripts/install-deps --test",
        file=sys.stderr,
    )
    sys.exit(3)


def pinned_version():
    """The jsonschema version that Tests/requirements.txt pins, or None when it pins none."""
    requirements = pathlib.Path(__file__).resolve().parents[2] / "requirements.txt"
    if not requirements.is_file():
        return None
    for line in requirements.read_text(encoding="utf-8").splitlines():
        name, _, version = line.partition("==")
        if name.strip().lower() == "jsonschema":
            return version.split("#")[0].strip()
    return None


def one_line(text):
    """The text on one line, so that each pair's answer is exactly one line."""
    return " ".join(str(text).split())


def pointer(path):
    """A JSON Pointer (RFC 6901) from jsonschema's path deque."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


def answer(schema, instance):
    """The answer line for one pair."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        return f"schema-error {pointer(error.absolute_path)}: {one_line(error.message)}"
    # An empty registry without `retrieve`: jsonschema adds the meta-schemas and nothing else, and never fetches.
    validator = Draft202012Validator(schema, registry=referencing.Registry())
    try:
        # Every error rather than the first: the whole schema is walked, as far as the instance leads.
        errors = list(validator.iter_errors(instance))
    except referencing.exceptions.Unresolvable as error:
        return f"ref-error {one_line(error)}"
    except RecursionError:
        return "error RecursionError: maximum recursion depth exceeded"
    except Exception as error:  # noqa: BLE001 -- every other failure is reported, not raised
        return f"error {type(error).__name__}: {one_line(error)}"
    return "invalid" if errors else "valid"


def main(argv):
    if len(argv) != 2:
        print("usage: differential.py PAIRS.jsonl", file=sys.stderr)
        return 2
    pinned, installed = pinned_version(), importlib.metadata.version("jsonschema")
    if pinned is not None and installed != pinned:
        print(
            f"differential.py: jsonschema {installed} is installed, Tests/requirements.txt pins {pinned}; "
            "run scripts/install-deps --test",
            file=sys.stderr,
        )
        return 3
    sys.setrecursionlimit(10_000)
    out = []
    with open(argv[1], encoding="utf-8") as pairs:
        for number, line in enumerate(pairs, start=1):
            if not line.strip():
                continue
            try:
                pair = json.loads(line)
                schema, instance = pair["schema"], pair["instance"]
            except (ValueError, KeyError, TypeError) as error:
                print(f"differential.py: line {number} is not a pair: {error}", file=sys.stderr)
                return 2
            out.append(answer(schema, instance))
    sys.stdout.write("".join(line + "\n" for line in out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
