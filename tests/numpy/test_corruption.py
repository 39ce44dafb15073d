#!/usr/bin/python3
"""check_dumps.py must reject corrupted dumps: it is only useful if it can fail.

usage: test_corruption.py PEBENCH_EXE WORKDIR

Dumps a few real cases with pebench, checks that the clean copy passes, then
corrupts copies one way each (a flipped output value, a wrong shape, an unknown
variant, a missing/extra tensor, a wrong dtype, tampered params, ...) and
expects check_dumps.py to exit non-zero on every one.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "check_dumps.py")


def check(folder):
    proc = subprocess.run([sys.executable, CHECKER, folder], capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def edit_meta(case, fn):
    path = os.path.join(case, "meta.json")
    with open(path) as f:
        meta = json.load(f)
    fn(meta)
    with open(path, "w") as f:
        json.dump(meta, f)


def npy(case, name):
    return os.path.join(case, name + ".npy")


def flip_output_value(case):
    y = np.load(npy(case, "y"))
    i = np.unravel_index(np.argmax(np.abs(y)), y.shape)
    y[i] = -y[i]
    np.save(npy(case, "y"), y)


def perturb_one_value(case):
    # A single element off by half the output's largest magnitude: small next to the
    # whole tensor, yet beyond both dtypes' nmse ceilings for these shapes.
    y = np.load(npy(case, "y"))
    flat = y.reshape(-1)
    flat[0] += 0.5 * np.max(np.abs(flat))
    np.save(npy(case, "y"), y)


def nan_output(case):
    y = np.load(npy(case, "y"))
    y.reshape(-1)[3] = np.nan
    np.save(npy(case, "y"), y)


def file_shape_differs_from_meta(case):
    y = np.load(npy(case, "y"))
    np.save(npy(case, "y"), y.reshape(y.shape[0], -1))


def shape_differs_from_spec(case):
    # File and meta agree, but the output lost its last position.
    y = np.load(npy(case, "y"))[:, :-1]
    np.save(npy(case, "y"), np.ascontiguousarray(y))
    edit_meta(case, lambda m: m["tensors"]["y"].update(shape=list(y.shape)))


def unknown_variant(case):
    edit_meta(case, lambda m: m.update(variant="abs.bogus"))


def missing_tensor(case):
    os.remove(npy(case, "x"))


def extra_tensor(case):
    np.save(npy(case, "z"), np.zeros(3, dtype=np.float32))


def wrong_file_dtype(case):
    np.save(npy(case, "y"), np.load(npy(case, "y")).astype(np.float64))


def wrong_meta_dtype(case):
    edit_meta(case, lambda m: m["tensors"]["x"].update(dtype="f16" if m["dtype"] == "f32" else "f32"))


def renamed_output(case):
    os.rename(npy(case, "y"), npy(case, "out"))
    def rename(m):
        m["outputs"] = ["out"]
        m["tensors"]["out"] = m["tensors"].pop("y")

    edit_meta(case, rename)


def tampered_param(case):
    edit_meta(case, lambda m: m["params"].update(offset=m["params"]["offset"] + 1))


def missing_param(case):
    edit_meta(case, lambda m: m["params"].pop("offset"))


def foreign_param(case):
    edit_meta(case, lambda m: m["params"].update(tile_size=64))


def id_mismatch(case):
    edit_meta(case, lambda m: m.update(id=m["id"] + "x"))


def inputs_list_wrong(case):
    edit_meta(case, lambda m: m.update(inputs=m["inputs"] + ["y"]))


CORRUPTIONS = [flip_output_value, perturb_one_value, nan_output, file_shape_differs_from_meta,
               shape_differs_from_spec, unknown_variant, missing_tensor, extra_tensor, wrong_file_dtype,
               wrong_meta_dtype, renamed_output, tampered_param, missing_param, foreign_param, id_mismatch,
               inputs_list_wrong]


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    exe, work = argv[1:]
    shutil.rmtree(work, ignore_errors=True)
    clean = os.path.join(work, "clean")
    cmd = [exe, "run", "--variant", "abs.learned,rope.apply", "--seq", "5", "--heads", "2", "--dim", "8",
           "--param", "d_model=16", "--param", "offset=2", "--dtype", "f32,f16", "--dump", clean,
           "--out", os.path.join(work, "report.json"), "--quiet", "--benchmark_min_time=0.001", "--no-peak"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    cases = sorted(os.listdir(clean))
    if not cases:
        print("FAIL: pebench dumped no case", file=sys.stderr)
        return 1
    rc, out = check(clean)
    if rc != 0:
        print(out)
        print("FAIL: the clean dump does not pass, so corruption tests would prove nothing", file=sys.stderr)
        return 1

    failures = 0
    empty = os.path.join(work, "empty")
    os.makedirs(empty)
    rc, _ = check(empty)
    print(f"{'ok  ' if rc != 0 else 'MISS'} empty dump folder -> exit {rc}")
    failures += rc == 0
    for corrupt in CORRUPTIONS:  # every corruption on every case kind (f32/f16, abs/rope), one checker run each
        root = os.path.join(work, corrupt.__name__)
        for case in cases:
            shutil.copytree(os.path.join(clean, case), os.path.join(root, case))
            corrupt(os.path.join(root, case))
        rc, out = check(root)
        lines = [line for line in out.splitlines() if line.startswith(tuple(cases))]
        fails = [line for line in lines if "  FAIL (" in line and "  PASS" not in line]
        caught = rc != 0 and len(lines) == len(cases) and len(fails) == len(cases)
        failures += not caught
        print(f"{'ok  ' if caught else 'MISS'} {corrupt.__name__:<28} exit {rc}, {len(fails)}/{len(cases)} cases FAIL")
        for line in lines:
            print(f"       {line[:170]}")
    print(f"{failures} corruption(s) not caught" if failures else "every corruption was caught")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
