"""Validates JSON runtime plans against docs/runtime-plan.schema.json.

Prints "valid: FILE" or "invalid: FILE: WHY" per plan; exit status 1 when
one is invalid."""

import json
import os
import sys

import jsonschema

SCHEMA = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs",
                      "runtime-plan.schema.json")


def main(paths):
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    status = 0
    for path in paths:
        with open(path, encoding="utf-8") as f:
            plan = json.load(f)
        name = os.path.basename(path)
        error = jsonschema.exceptions.best_match(validator.iter_errors(plan))
        if error is None:
            print(f"valid: {name}")
            continue
        where = "/".join(str(p) for p in error.absolute_path)
        print(f"invalid: {name}: at /{where}: {error.message}")
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
