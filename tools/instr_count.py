#!/usr/bin/env python3
"""Instructions executed per kernel on lavapipe, counted by callgrind: a
signal that does not move with load (docs/compare-and-gate.md, "Instruction
counts (callgrind)").

  instr_count.py measure [--pebench P] [--dir D] [--out F.json] [--md F.md] [CASE...]
  instr_count.py parse CALLGRIND.out [--report REPORT.json] [--name CASE]
  instr_count.py compare BASE.json NEW.json [--threshold 0.02] [--either] [--any-cpu]
  instr_count.py cases

llvmpipe compiles each compute pipeline to machine code with LLVM at run time;
callgrind sees that code as functions of the unknown object `???`. The
compiled shader's entry is called once per workgroup by lavapipe's dispatch
code (libvulkan_lvp.so), and its inclusive instruction count (Ir) covers the
whole workgroup (the per-lane coroutines it calls included). Ir per call is
then the instructions one workgroup of that kernel executes: it does not depend
on load, on how many iterations Google Benchmark chose, or on timing at all.

`measure` runs each case (one pebench process per case, one result each)
under callgrind with LP_NUM_THREADS=0 (llvmpipe runs every workgroup on the
calling thread) and writes one JSON file: per case, per JIT entry, calls,
inclusive Ir and Ir per call; where the entries map one to one onto the
report's pipelines (same count; each entry's calls a whole multiple of its
pipeline's workgroups, in whichever assignment fits: map_pipelines) also
the pipeline, its dispatches (a run's and in all), Ir per dispatch and Ir
per run of the case.
`compare` gates NEW against BASE case by case: exit 1 when a case's Ir per
run (per workgroup where there is no mapping) grew past the threshold.
Exit 2 on bad input (one line naming the file or value).
"""
import argparse
import itertools
import json
import math
import os
import re
import shlex
import subprocess
import sys
import time

SCHEMA = "pebench-instr-count/1"
LVP_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
# Mesa objects whose calls into `???` are compiled shaders being run.
CALLER_OBJECT = r"(lvp|gallium|llvmpipe)[^/]*\.so"

# The reduced set: small shapes, f32, one case each (name -> pebench run args).
CASES = {
    "abs.learned": "--variant abs.learned --seq 256",
    "rope.apply": "--variant rope.apply --seq 128 --heads 2 --dim 64",
    "attn.nope/flash": "--variant attn.nope --impl flash --seq 128 --heads 2 --dim 64 --causal true",
    "attn.nope/naive": "--variant attn.nope --impl naive --seq 128 --heads 2 --dim 64 --causal true",
    "attn.alibi/flash": "--variant attn.alibi --impl flash --seq 128 --heads 2 --dim 64 --causal true",
    "attn.t5/flash": "--variant attn.t5 --impl flash --seq 128 --heads 2 --dim 64 --causal true",
    "attn.fire/flash": "--variant attn.fire --impl flash --seq 128 --heads 2 --dim 64 --causal true",
    "attn.nope/decode": "--variant attn.nope --impl flash --seq 1 --kv-seq 4096 --heads 8 --kv-heads 2 --dim 64 --causal true",
    "attn.nope/window": "--variant attn.nope --impl flash --seq 256 --heads 2 --dim 64 --causal true --param window=64 --param sink_tokens=4",
}
COMMON = ("--dtype f32 --batch 1 --benchmark_min_time=0.001 --benchmark_repetitions=1 "
          "--no-validate --no-peak --quiet")


class BadInput(Exception):
    pass


# ---------------------------------------------------------------- parsing

def parse_callgrind(path, caller_object=CALLER_OBJECT):
    """The JIT entries of one callgrind output file: functions of the unknown
    object `???` called from a Mesa driver object. Returns
    {"summary_ir": int, "callers": {"OBJECT:FN": [entry...]}}, each caller's
    entries sorted by address, an entry being
      address, calls (from that caller),
      ir: the compiled code's own instructions: the self Ir of the entry and
          of every `???` function it reaches through `???` functions (the
          per-lane coroutines llvmpipe splits a workgroup into),
      ir_inclusive: what callgrind counts inclusively for those calls,
      ir_outside: the difference, Mesa and libc helpers the code calls
          (coroutine memory: malloc/free, whose count depends on the heap),
      ir_per_call: ir / calls, the instructions of one workgroup.
    Besides the dispatch function (whose targets are the compiled shaders) a
    Mesa object calls a few one-instruction stubs in `???` once or so;
    case_record picks the dispatch function. Raises BadInput naming the file
    when it is not a callgrind file or has no Ir event."""
    try:
        f = open(path, encoding="utf-8", errors="replace")
    except OSError as e:
        raise BadInput(f"{path}: cannot read ({e.strerror})")
    caller_re = re.compile(caller_object)
    names = {"ob": {}, "fl": {}, "fn": {}}
    lineno = 0

    def name(kind, text):
        m = re.match(r"\((\d+)\)(?: (.*))?$", text)
        if not m:
            return text
        if m.group(2) is not None:
            names[kind][m.group(1)] = m.group(2)
        try:
            return names[kind][m.group(1)]
        except KeyError:
            raise BadInput(f"{path}: line {lineno}: {kind} id ({m.group(1)}) used before it is named")

    def cost(line):
        fields = line.split()
        try:
            return int(fields[npos + ir_index]) if len(fields) > npos + ir_index else 0
        except ValueError:
            raise BadInput(f"{path}: line {lineno}: bad cost line {line!r}")

    npos = 1
    ir_index = None
    summary = None
    ob = fn = None
    cob = None
    cfn = None
    pending_calls = None
    skip_next = False
    entries = {}      # caller -> target -> {address, calls, ir_inclusive}
    jit_self = {}     # `???` function -> self Ir
    jit_edges = {}    # `???` function -> set of `???` functions it calls
    saw_header = False
    with f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if lineno == 1 and line.startswith("# callgrind format"):
                saw_header = True
            if not line or line.startswith("#"):
                continue
            if skip_next:
                skip_next = False
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                if ir_index is None:
                    raise BadInput(f"{path}: line {lineno}: a cost before the 'events:' line naming Ir")
                if pending_calls is not None:
                    ir = cost(line)
                    target_ob = cob if cob is not None else ob
                    if target_ob == "???":
                        if ob == "???":
                            jit_edges.setdefault(fn, set()).add(cfn)
                        elif ob and caller_re.search(ob):
                            caller = f"{os.path.basename(ob)}:{fn}"
                            e = entries.setdefault(caller, {}).setdefault(
                                cfn, {"address": cfn, "calls": 0, "ir_inclusive": 0})
                            e["calls"] += pending_calls
                            e["ir_inclusive"] += ir
                    pending_calls = None
                    cob = None
                elif ob == "???":
                    jit_self[fn] = jit_self.get(fn, 0) + cost(line)
                continue
            key, sep, val = line.partition("=")
            if sep and key in ("ob", "fl", "fi", "fe", "fn", "cob", "cfi", "cfl", "cfn", "jfi", "jfn"):
                kind = {"ob": "ob", "cob": "ob", "fn": "fn", "cfn": "fn", "jfn": "fn"}.get(key, "fl")
                v = name(kind, val)
                if key == "ob":
                    ob = v
                elif key == "fn":
                    fn = v
                elif key == "cob":
                    cob = v
                elif key == "cfn":
                    cfn = v
                continue
            if sep and key == "calls":
                try:
                    pending_calls = int(val.split()[0])
                except (ValueError, IndexError):
                    raise BadInput(f"{path}: line {lineno}: bad calls line {line!r}")
                continue
            if sep and key in ("jump", "jcnd"):
                skip_next = True
                continue
            hkey, hsep, hval = line.partition(":")
            if hsep:
                hkey = hkey.strip()
                if hkey == "positions":
                    npos = len(hval.split())
                elif hkey == "events":
                    ev = hval.split()
                    if "Ir" not in ev:
                        raise BadInput(f"{path}: events '{hval.strip()}' lack Ir")
                    ir_index = ev.index("Ir")
                elif hkey == "summary" and ir_index is not None:
                    summary = int(hval.split()[ir_index])
                continue
            raise BadInput(f"{path}: line {lineno}: not callgrind format: {line[:60]!r}")
    if not saw_header or ir_index is None:
        raise BadInput(f"{path}: not a callgrind output file (no '# callgrind format' header with an Ir event)")

    def reach(start):
        seen, todo = set(), [start]
        while todo:
            x = todo.pop()
            if x not in seen:
                seen.add(x)
                todo.extend(jit_edges.get(x, ()))
        return seen

    callers = {}
    for caller, targets in entries.items():
        out = []
        for e in sorted(targets.values(), key=lambda e: int(e["address"], 16) if e["address"].startswith("0x") else 0):
            own = sum(jit_self.get(x, 0) for x in reach(e["address"]))
            out.append({"address": e["address"], "calls": e["calls"], "ir": own,
                        "ir_per_call": round(own / e["calls"], 1) if e["calls"] else None,
                        "ir_inclusive": e["ir_inclusive"], "ir_outside": e["ir_inclusive"] - own})
        callers[caller] = out
    return {"summary_ir": summary, "callers": callers}


def _workgroups(p):
    g = 1
    for x in p.get("groups") or [0]:
        g *= int(x)
    return g


def _try_mapping(entries, pipelines):
    """(runs, per-run dispatches of each pipeline) with entry i run by
    pipeline i, else (None, why). runs: the greatest number that divides
    every pipeline's dispatches (a pre-pass may dispatch one pipeline
    several times a run: FIRE's pack)."""
    counts = []
    for e, p in zip(entries, pipelines):
        g = _workgroups(p)
        if g <= 0 or e["calls"] % g:
            return None, f"entry {e['address']}: {e['calls']} calls, not a multiple of {p.get('shader')}'s {g} workgroups"
        counts.append(e["calls"] // g)
    runs = 0
    for c in counts:
        runs = math.gcd(runs, c)
    return (runs, [c // runs for c in counts]) if runs else (None, "no dispatch")


def map_pipelines(entries, pipelines):
    """Entries (address order) onto the report's pipelines (their order).
    Returns (runs, reason): runs = how many times the case ran when the
    mapping holds (entries annotated in place), else None and why not.
    JIT addresses need not follow the pipelines' order (the shader cache
    hands out a low address to whichever module it loads first): every
    assignment of entries to pipelines is tried, and the one whose
    pipelines run fewest dispatches a run wins (ties: address order).
    Pipelines with equal workgroup counts and calls cannot be told apart;
    Ir per run does not depend on which is which."""
    if len(entries) != len(pipelines):
        return None, f"{len(entries)} JIT entries, {len(pipelines)} pipelines"
    best, why_not = None, None
    # Address order first (permutations start with it): its reason is the
    # one reported when no assignment fits.
    orders = itertools.permutations(range(len(entries))) if len(entries) <= 6 else [range(len(entries))]
    for order in orders:
        runs, per_run = _try_mapping([entries[i] for i in order], pipelines)
        if not runs:
            why_not = why_not or per_run
        elif best is None or sum(per_run) < sum(best[2]):
            best = (order, runs, per_run)
    if best is None:
        return None, why_not
    order, runs, per_run = best
    for i, p, k in zip(order, pipelines, per_run):
        e = entries[i]
        e["shader"] = p.get("shader")
        e["workgroups"] = _workgroups(p)
        e["dispatches"] = runs * k
        e["dispatches_per_run"] = k
        e["ir_per_dispatch"] = round(e["ir"] / (runs * k), 1)
    return runs, None


def pick_dispatcher(callers, pipelines=None):
    """The Mesa function that runs the compiled shaders: where a report's
    pipelines are given, the caller whose targets map onto them; else (or
    when none maps) the caller with the most Ir inside `???`."""
    if pipelines:
        for caller, entries in sorted(callers.items(), key=lambda kv: -sum(e["ir"] for e in kv[1])):
            if map_pipelines([dict(e) for e in entries], pipelines)[0]:
                return caller
    return max(callers, key=lambda c: sum(e["ir"] for e in callers[c]))


def case_record(cg_path, report_path=None):
    parsed = parse_callgrind(cg_path)
    if not parsed["callers"]:
        raise BadInput(f"{cg_path}: no JIT entry (no call from a Mesa driver object into `???`): not lavapipe, or nothing dispatched")
    r, rep = None, {}
    if report_path:
        try:
            rep = json.load(open(report_path))
            results = rep["results"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise BadInput(f"{report_path}: not a pebench report ({e})")
        if not isinstance(results, list) or len(results) != 1:
            raise BadInput(f"{report_path}: {len(results) if isinstance(results, list) else 'no'} results; "
                           "one case a process is needed to attribute the JIT code")
        r = results[0]
    dispatcher = pick_dispatcher(parsed["callers"], (r or {}).get("pipelines"))
    rec = {"callgrind": cg_path, "total_ir": parsed["summary_ir"], "dispatcher": dispatcher,
           "entries": parsed["callers"][dispatcher]}
    if r is not None:
        rec.update({"id": r.get("id"), "variant": r.get("variant"), "impl": r.get("impl"),
                    "params": r.get("params"), "status": r.get("status"),
                    "device": ((rep.get("devices") or [{}])[0]).get("name")})
        runs, why = map_pipelines(rec["entries"], r.get("pipelines") or [])
        rec["dispatches"] = runs
        if runs:
            rec["ir_per_run"] = round(sum(e["ir"] for e in rec["entries"]) / runs, 1)
        else:
            rec["unmapped"] = why
    return rec


# ---------------------------------------------------------------- measuring

def cpu_id():
    info = {}
    try:
        for line in open("/proc/cpuinfo"):
            k, _, v = line.partition(":")
            k = k.strip()
            if k in ("vendor_id", "cpu family", "model", "model name", "stepping") and k not in info:
                info[k] = v.strip()
            if not line.strip() and info:
                break
    except OSError:
        pass
    return (f"{info.get('vendor_id', '?')} family {info.get('cpu family', '?')} model {info.get('model', '?')} "
            f"stepping {info.get('stepping', '?')} ({info.get('model name', '?')})")


def loadavg():
    try:
        return float(open("/proc/loadavg").read().split()[0])
    except (OSError, ValueError):
        return None


def measure(args):
    names = args.cases or list(CASES)
    for n in names:
        if n not in CASES:
            raise BadInput(f"case '{n}': unknown (instr_count.py cases lists them)")
    if not (os.path.isfile(args.pebench) and os.access(args.pebench, os.X_OK)):
        raise BadInput(f"--pebench {args.pebench}: not an executable")
    os.makedirs(args.dir, exist_ok=True)
    env = dict(os.environ, LP_NUM_THREADS="0")
    env.setdefault("VK_DRIVER_FILES", LVP_ICD)
    try:
        vg = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        raise BadInput("valgrind: not found (apt-get install valgrind)")
    out = {"schema": SCHEMA, "host": {"cpu": cpu_id()}, "valgrind": vg,
           "pebench": os.path.abspath(args.pebench), "cases": []}
    for n in names:
        stem = os.path.join(args.dir, n.replace("/", "_"))
        cg, rep = stem + ".callgrind", stem + ".json"
        for p in (cg, rep):
            if os.path.exists(p):
                os.remove(p)
        cmd = (["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}", args.pebench, "run"]
               + shlex.split(CASES[n]) + shlex.split(COMMON) + shlex.split(args.args) + ["--out", rep])
        load0, t0 = loadavg(), time.monotonic()
        if not args.no_prewarm:
            # The same run under valgrind without a tool first: llvmpipe
            # compiles the pipelines with LLVM there several times faster
            # than under callgrind and stores the code in Mesa's shader
            # cache, which the callgrind run then loads. (A run without
            # valgrind does not do: its cache entries are not found under
            # valgrind, whose CPU differs in what cpuid says.)
            warm = subprocess.run(["valgrind", "--tool=none", "-q"] + cmd[3:-1] + [stem + ".warm.json"], env=env,
                                  capture_output=True, text=True, timeout=args.timeout)
            if warm.returncode != 0:
                tail = (warm.stderr or warm.stdout).strip().splitlines()[-2:]
                print(f"instr-count: case {n}: pebench under valgrind --tool=none exited {warm.returncode}: "
                      f"{' | '.join(tail)}", file=sys.stderr)
                sys.exit(2)
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
        wall = time.monotonic() - t0
        if p.returncode != 0 or not os.path.exists(cg):
            tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
            print(f"instr-count: case {n}: pebench under callgrind exited {p.returncode}: {' | '.join(tail)}", file=sys.stderr)
            sys.exit(2)
        rec = case_record(cg, rep)
        rec.update({"name": n, "args": " ".join(x for x in (CASES[n], COMMON, args.args) if x), "wall_s": round(wall, 1),
                    "load_avg": [load0, loadavg()]})
        out["cases"].append(rec)
        if rec.get("device"):
            out["device"] = rec["device"]
        print(f"instr-count: {n}: {len(rec['entries'])} JIT entries, "
              + (f"{rec['ir_per_run']:.0f} Ir a run" if rec.get("ir_per_run") else f"unmapped ({rec.get('unmapped')})")
              + f", {wall:.0f} s", file=sys.stderr)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    if args.md:
        with open(args.md, "w") as f:
            f.write(markdown(out))
    print(markdown(out), end="")


def markdown(doc):
    lines = [f"Host: {doc.get('host', {}).get('cpu')}; device: {doc.get('device')}; {doc.get('valgrind')}", "",
             "| case | JIT entries | dispatches | Ir/run | wall s | load average |",
             "|---|---:|---:|---:|---:|---|"]
    for c in doc["cases"]:
        load = " -> ".join(str(x) for x in c.get("load_avg") or []) or "-"
        run = f"{c['ir_per_run']:.0f}" if c.get("ir_per_run") else f"- ({c.get('unmapped')})"
        lines.append(f"| {c.get('name')} | {len(c['entries'])} | {c.get('dispatches') or '-'} | {run} | "
                     f"{c.get('wall_s', '-')} | {load} |")
    lines += ["", "| case | entry | shader | calls | Ir (own) | Ir/call (workgroup) | Ir/dispatch | Ir outside |",
              "|---|---|---|---:|---:|---:|---:|---:|"]
    for c in doc["cases"]:
        for e in c["entries"]:
            lines.append(
                f"| {c.get('name')} | {e['address']} | {e.get('shader', '-')} | {e['calls']} | {e['ir']} | "
                f"{e['ir_per_call']:.1f} | {e['ir_per_dispatch'] if 'ir_per_dispatch' in e else '-'} | "
                f"{e.get('ir_outside', '-')} |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- comparing

def load_counts(path):
    try:
        doc = json.load(open(path))
    except OSError as e:
        raise BadInput(f"{path}: cannot read ({e.strerror})")
    except ValueError:
        raise BadInput(f"{path}: not JSON")
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("cases"), list):
        raise BadInput(f"{path}: not an instruction-count file (schema {SCHEMA})")
    for c in doc["cases"]:
        if not isinstance(c, dict) or not isinstance(c.get("name"), str) or not isinstance(c.get("entries"), list):
            raise BadInput(f"{path}: a case without name or entries")
        for e in c["entries"]:
            if not isinstance(e.get("calls"), int) or not isinstance(e.get("ir"), int) or e["calls"] <= 0 or e["ir"] < 0:
                raise BadInput(f"{path}: case {c['name']}: entry {e.get('address')}: calls/ir not positive integers")
    return doc


def case_metric(c):
    """Ir per run where the entries map onto pipelines, else the sum of Ir
    per workgroup over entries (what a change in the code shows either way)."""
    if c.get("ir_per_run"):
        return c["ir_per_run"], "Ir/run"
    return sum(e["ir"] / e["calls"] for e in c["entries"]), "Ir/workgroup (summed over entries)"


def compare(args):
    if not (args.threshold > 0):
        raise BadInput(f"--threshold {args.threshold}: must be > 0 (a fraction, 0.02 = 2%)")
    base, new = load_counts(args.base), load_counts(args.new)
    bcpu, ncpu = base.get("host", {}).get("cpu"), new.get("host", {}).get("cpu")
    if bcpu != ncpu and not args.any_cpu:
        raise BadInput(f"BASE ran on {bcpu!r}, NEW on {ncpu!r}: LLVM tunes the code to the host CPU, counts compare "
                       "only on the same model (--any-cpu to compare anyway)")
    if base.get("device") != new.get("device") and not args.any_cpu:
        raise BadInput(f"BASE ran on {base.get('device')!r}, NEW on {new.get('device')!r}: counts compare only "
                       "with the same Mesa and LLVM (--any-cpu to compare anyway)")
    bcases = {c["name"]: c for c in base["cases"]}
    flags = 0
    for c in new["cases"]:
        b = bcases.pop(c["name"], None)
        if b is None:
            print(f"{c['name']}: only in NEW, not compared")
            continue
        if b.get("params") != c.get("params"):
            print(f"{c['name']}: parameters differ, not compared")
            continue
        bm, bk = case_metric(b)
        nm, nk = case_metric(c)
        if bk != nk:
            # One side maps onto pipelines, the other does not: compare per workgroup.
            bm, bk = sum(e["ir"] / e["calls"] for e in b["entries"]), "Ir/workgroup (summed over entries)"
            nm, nk = sum(e["ir"] / e["calls"] for e in c["entries"]), bk
        ratio = nm / bm if bm else float("inf")
        grew = ratio > 1 + args.threshold
        shrank = ratio < 1 - args.threshold
        flagged = grew or (shrank and args.either)
        flags += flagged
        word = "  MORE: FLAG" if grew and flagged else "  FEWER: FLAG" if flagged else ""
        print(f"{c['name']}: {nk} {bm:.0f} -> {nm:.0f} ({ratio - 1:+.2%}){word}")
        if len(b["entries"]) == len(c["entries"]):
            for eb, en in zip(b["entries"], c["entries"]):
                r = en["ir_per_call"] / eb["ir_per_call"] if eb["ir_per_call"] else float("inf")
                if abs(r - 1) > args.threshold:
                    print(f"  {en.get('shader') or en['address']}: Ir/workgroup {eb['ir_per_call']:.1f} -> {en['ir_per_call']:.1f} ({r:.4f}x)")
        else:
            print(f"  JIT entries {len(b['entries'])} -> {len(c['entries'])}")
    for n in bcases:
        print(f"{n}: only in BASE, not compared")
    print(f"instr-count compare: {flags} case(s) past {args.threshold:.1%}" + (" (either way)" if args.either else " (more instructions)"))
    return 1 if flags else 0


class OneLineParser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        print(f"{self.prog}: {message}", file=sys.stderr)
        sys.exit(2)


def main(argv):
    ap = OneLineParser(prog="instr-count", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=OneLineParser)
    m = sub.add_parser("measure", help="run cases under callgrind and write the counts")
    m.add_argument("cases", nargs="*", help="case names (default: all; 'cases' lists them)")
    m.add_argument("--pebench", default="build/pebench")
    m.add_argument("--dir", default="build/instr-count", help="callgrind outputs and reports")
    m.add_argument("--out", default="build/instr-count/counts.json")
    m.add_argument("--md", help="also write the table as markdown")
    m.add_argument("--timeout", type=float, default=1200, help="seconds a case may take")
    m.add_argument("--no-prewarm", action="store_true",
                   help="do not run each case under valgrind --tool=none first (to fill Mesa's shader cache)")
    m.add_argument("--args", default="", help="more pebench run options for every case (e.g. --inject-slowdown ...)")
    p = sub.add_parser("parse", help="the JIT entries of one callgrind output file")
    p.add_argument("callgrind")
    p.add_argument("--report", help="the case's pebench report, to map entries onto its pipelines")
    p.add_argument("--name", help="write a counts file (compare's input) of this one case, so named")
    c = sub.add_parser("compare", help="BASE vs NEW counts: exit 1 when a case grew past the threshold")
    c.add_argument("base")
    c.add_argument("new")
    c.add_argument("--threshold", type=float, default=0.02)
    c.add_argument("--either", action="store_true", help="flag fewer instructions too")
    c.add_argument("--any-cpu", action="store_true", help="compare files made on different CPU models or drivers")
    sub.add_parser("cases", help="list the reduced set")
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    try:
        if a.cmd == "cases":
            for n, v in CASES.items():
                print(f"{n}\t{v}")
            return 0
        if a.cmd == "parse":
            rec = case_record(a.callgrind, a.report)
            if a.name:
                rec["name"] = a.name
                rec = {"schema": SCHEMA, "host": {"cpu": cpu_id()}, "device": rec.get("device"), "cases": [rec]}
            print(json.dumps(rec, indent=1))
            return 0
        if a.cmd == "measure":
            measure(a)
            return 0
        return compare(a)
    except BadInput as e:
        print(f"instr-count: {e}", file=sys.stderr)
        return 2
    except subprocess.TimeoutExpired as e:
        print(f"instr-count: a case ran past --timeout {e.timeout:.0f} s", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
