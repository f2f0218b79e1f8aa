#!/usr/bin/env python3
"""Checks scanlab app reports (the --json of every app) against the JSON Schema in
docs/schema/app-report.schema.json (docs/json-schema.md).

  scripts/validate-report.py FILE.json...            one line per file: ok, or each problem
  scripts/validate-report.py --schema S.json FILE... another schema file

Python 3 standard library only: it implements the part of JSON Schema (draft 2020-12)
that the schema uses (type, const, enum, properties, required, additionalProperties,
items, minItems, minLength, minimum, pattern, anyOf, local $ref) and refuses a schema
that uses anything else, so the check never passes by ignoring a keyword. Where the
jsonschema module is installed, each file is also checked with it.
Exit status: 0 every file valid, 1 a file invalid or unreadable, 2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCHEMA = os.path.join(HERE, "..", "docs", "schema", "app-report.schema.json")
KNOWN = {"$schema", "$defs", "title", "description", "type", "const", "enum", "properties", "required",
         "additionalProperties", "items", "minItems", "minLength", "minimum", "pattern", "anyOf", "$ref"}


def type_matches(value, name):
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool) or (
            isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    raise ValueError(f"unknown type {name!r} in the schema")


def resolve(root, ref):
    if not ref.startswith("#/"):
        raise ValueError(f"only local references are supported, not {ref!r}")
    node = root
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def validate(value, schema, root, path="$"):
    """The problems of `value` against `schema`, as 'path: message' strings."""
    unknown = set(schema) - KNOWN
    if unknown:
        raise ValueError(f"the schema uses keywords this checker does not implement: {sorted(unknown)}")
    if "$ref" in schema:
        return validate(value, resolve(root, schema["$ref"]), root, path)
    problems = []
    if "anyOf" in schema:
        options = [validate(value, s, root, path) for s in schema["anyOf"]]
        if all(options):  # none fits: the problems of the closest, rather one of the value's type
            same_type = [o for o in options if not (len(o) == 1 and o[0].startswith(f"{path}: expected "))]
            return min(same_type or options, key=len)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(type_matches(value, t) for t in types):
            return [f"{path}: expected {' or '.join(types)}, got {type(value).__name__} {json.dumps(value)[:60]}"]
    if "const" in schema and value != schema["const"]:
        problems.append(f"{path}: expected {json.dumps(schema['const'])}, got {json.dumps(value)[:60]}")
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path}: {json.dumps(value)[:60]} is not one of {json.dumps(schema['enum'])}")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            problems.append(f"{path}: shorter than {schema['minLength']} characters")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            problems.append(f"{path}: {value[:60]!r} does not match {schema['pattern']}")
    if type_matches(value, "number") and "minimum" in schema and value < schema["minimum"]:
        problems.append(f"{path}: {value} is below the minimum {schema['minimum']}")
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            problems.append(f"{path}: fewer than {schema['minItems']} items")
        if "items" in schema:
            for i, item in enumerate(value):
                problems += validate(item, schema["items"], root, f"{path}[{i}]")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{path}: '{key}' is missing")
        for key, item in value.items():
            if key in properties:
                problems += validate(item, properties[key], root, f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                problems.append(f"{path}: '{key}' is not in the schema")
            elif isinstance(schema.get("additionalProperties"), dict):
                problems += validate(item, schema["additionalProperties"], root, f"{path}.{key}")
    return problems


def check_file(path, schema):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        return [f"not readable JSON: {e}"]
    problems = validate(doc, schema, schema)
    try:
        import jsonschema  # optional: a second opinion where it is installed
    except ImportError:
        return problems
    if not problems:
        problems = [f"jsonschema: {e.message} at {'/'.join(map(str, e.absolute_path))}"
                    for e in jsonschema.Draft202012Validator(schema).iter_errors(doc)]
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(prog="validate-report.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", metavar="FILE.json")
    parser.add_argument("--schema", default=DEFAULT_SCHEMA, help="the JSON Schema (default: %(default)s)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the problems")
    args = parser.parse_args(argv)
    with open(args.schema, encoding="utf-8") as f:
        schema = json.load(f)
    bad = 0
    for path in args.files:
        problems = check_file(path, schema)
        if problems:
            bad += 1
            for p in problems[:20]:
                print(f"{path}: {p}")
            if len(problems) > 20:
                print(f"{path}: ... and {len(problems) - 20} more")
        elif not args.quiet:
            print(f"{path}: ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
