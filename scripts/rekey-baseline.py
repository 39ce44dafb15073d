#!/usr/bin/env python3
"""rekey-baseline.py BASELINE.json NEW.json [OUT.json]

A variant that gains parameters writes them out in every case (reports
record every parameter, defaults included), so each of its cases gets a new
key and a committed baseline no longer matches it ("missing" in the gate).
When the new parameters are additions at values that reproduce the old
behaviour, the baseline's cases are the same cases: this adds to each
baseline case the parameters that NEW's matching case has and the baseline
lacks. A baseline case matches a NEW case of the same variant, impl and
dtype whose parameters include all of the baseline case's, with equal
values; where several match with different added values, the one agreeing
with what the variant's unambiguous cases added is taken; a case with no
such match is left as it is and listed. Writes OUT (default: BASELINE,
replaced atomically). Exit 0; 2 on bad input.
"""
import json
import os
import sys
import tempfile


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"rekey-baseline: cannot read {path}: {e}", file=sys.stderr)
        sys.exit(2)


def extras(case, candidates):
    """What each NEW case matching `case` adds to its parameters."""
    out = []
    for c in candidates:
        if all(k in c["params"] and c["params"][k] == v for k, v in case["params"].items()):
            out.append({k: v for k, v in c["params"].items() if k not in case["params"]})
    return out


def added_params(case, candidates, typical):
    """The parameters NEW adds to `case`, or None when no single answer.
    Several matches (a new form of the variant adds a parameter at another
    value: xPos beside plain RoPE) are settled by `typical`, the values the
    variant's unambiguous cases took: the one match that agrees with them."""
    found = extras(case, candidates)
    distinct = [e for i, e in enumerate(found) if e not in found[:i]]
    if len(distinct) == 1:
        return distinct[0]
    agree = [e for e in distinct if all(typical.get(k, v) == v for k, v in e.items())]
    return agree[0] if len(agree) == 1 else None


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    base_path, new_path = argv[1], argv[2]
    out_path = argv[3] if len(argv) == 4 else base_path
    base, new = load(base_path), load(new_path)
    by_kind = {}
    for c in new.get("results", []):
        by_kind.setdefault((c["variant"], c.get("impl"), c.get("dtype")), []).append(c)
    typical = {}  # variant -> the added values its unambiguous cases agree on
    for case in base.get("results", []):
        found = extras(case, by_kind.get((case["variant"], case.get("impl"), case.get("dtype")), []))
        if len(found) == 1:
            seen = typical.setdefault(case["variant"], {})
            for k, v in found[0].items():
                seen[k] = v if seen.get(k, v) == v else None
    changed, unmatched = 0, []
    for case in base.get("results", []):
        kind = (case["variant"], case.get("impl"), case.get("dtype"))
        extra = added_params(case, by_kind.get(kind, []), typical.get(case["variant"], {}))
        if extra is None:
            unmatched.append(case)
        elif extra:
            case["params"].update(extra)
            changed += 1
    folder = os.path.dirname(os.path.abspath(out_path))
    fd, tmp = tempfile.mkstemp(prefix=".rekey.", dir=folder)
    with os.fdopen(fd, "w") as f:
        json.dump(base, f, indent=2)
        f.write("\n")
    os.replace(tmp, out_path)
    print(f"rekey-baseline: {out_path}: {changed} case(s) given new parameters, {len(unmatched)} without a match")
    for c in unmatched[:20]:
        print(f"  no match: {c['variant']} {c.get('impl')} {c.get('dtype')} {c['params']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
