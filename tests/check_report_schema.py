#!/usr/bin/env python3
"""Validates pebench reports against reports/schema/pebench.report.schema.json.

Usage: check_report_schema.py SCHEMA REPORT [REPORT...]; exits non-zero on the
first report that does not conform, printing where."""
import json
import sys

import jsonschema


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    with open(argv[1]) as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    status = 0
    for path in argv[2:]:
        with open(path) as f:
            report = json.load(f)
        errors = sorted(validator.iter_errors(report), key=lambda e: list(e.path))
        for e in errors[:10]:
            print(f"{path}: {'/'.join(map(str, e.path))}: {e.message}")
        if errors:
            status = 1
        else:
            print(f"{path}: conforms ({len(report['results'])} results)")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
