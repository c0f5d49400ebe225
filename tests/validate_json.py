#!/usr/bin/env python3
"""validate_json.py SCHEMA DEF FILE: checks FILE (JSON) against $defs/DEF of
SCHEMA (doc/nestmap.schema.json) with Draft 2020-12, counting 2.0 as *not*
an integer, so a float printed where a count belongs fails.  Prints the
errors; exit 0 valid, 1 invalid, 2 unusable input."""
import json
import sys

import jsonschema


def main():
    schema_path, name, path = sys.argv[1:4]
    with open(schema_path) as f:
        schema = json.load(f)
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"{path}: not JSON: {e}")
        return 2
    base = jsonschema.Draft202012Validator
    strict = base.TYPE_CHECKER.redefine(
        "integer", lambda _, v: isinstance(v, int) and not isinstance(v, bool))
    validator = jsonschema.validators.extend(base, type_checker=strict)
    sub = dict(schema)
    sub["$ref"] = f"#/$defs/{name}"
    errors = sorted(validator(sub).iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:10]:
        print(f"{path}: {'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
