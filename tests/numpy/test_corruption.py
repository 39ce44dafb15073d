#!/usr/bin/python3
"""check_dumps.py must reject corrupted dumps: it is only useful if it can fail.

usage: test_corruption.py PEBENCH_EXE WORKDIR

Dumps a few real cases with pebench, checks that the clean copy passes, then
corrupts copies one way each (a flipped output value, a wrong shape, an unknown
variant, a missing/extra tensor, a wrong dtype, tampered params, ...) and
expects check_dumps.py to exit non-zero on every one. Then the same for issue
43's forms: one case each of YaRN with DeepSeek's mscale pair, LongRoPE,
M-RoPE, xPos and fairseq's sinusoid, each corrupted in the ways that matter to
that form (a flipped truncate, swapped factor lists, the other M-RoPE layout,
xPos for the other tensor, a moved padding_idx, ...).
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


def set_param(**kw):
    def corrupt(case):
        edit_meta(case, lambda m: m["params"].update(kw))
    corrupt.__name__ = "set " + ",".join(f"{k}={v}" for k, v in kw.items())
    return corrupt


def swap_files(a, b):
    def corrupt(case):
        os.rename(npy(case, a), npy(case, "tmp"))
        os.rename(npy(case, b), npy(case, a))
        os.rename(npy(case, "tmp"), npy(case, b))
    corrupt.__name__ = f"swap {a} and {b}"
    return corrupt


def edit_array(name, fn, label):
    def corrupt(case):
        np.save(npy(case, name), fn(np.load(npy(case, name))))
    corrupt.__name__ = label
    return corrupt


def retype(name, dtype):
    def corrupt(case):
        a = np.load(npy(case, name)).astype(dtype)
        np.save(npy(case, name), a)
        code = {"float32": "f32", "float16": "f16", "int32": "i32"}[np.dtype(dtype).name]
        edit_meta(case, lambda m: m["tensors"][name].update(dtype=code))
    corrupt.__name__ = f"{name} stored as {np.dtype(dtype).name}"
    return corrupt


def one_factor(value):
    def fn(a):
        a = a.copy()
        a[1] = value
        return a
    return fn


# issue 43's forms: label -> (pebench arguments, corruptions each of which must make the case FAIL).
ROPE_RUN = ["--variant", "rope.apply", "--batch", "1", "--heads", "2", "--dim", "16", "--dtype", "f32"]
FORMS = {
    # s 40, mscale 0.707 / mscale_all_dim 1: attention factor 0.9211 (1.3689 with either unset).
    "yarn": (ROPE_RUN + ["--seq", "5", "--param", "offset=500", "--param", "scaling=yarn", "--param", "factor=40",
                         "--param", "mscale=0.707", "--param", "mscale_all_dim=1", "--param", "truncate=false"],
             [set_param(truncate=True), set_param(mscale_all_dim=0.0), set_param(mscale=1.0),
              set_param(attention_factor=1.3688879454113936), set_param(factor=32.0)]),
    # L = offset + N = 8 > L0 = 7: long_factor.
    "longrope": (ROPE_RUN + ["--seq", "5", "--param", "offset=3", "--param", "scaling=longrope",
                             "--param", "orig_max_pos=7"],
                 [set_param(orig_max_pos=8), swap_files("short_factor", "long_factor"),
                  edit_array("long_factor", one_factor(0.5), "a long_factor below the fill's 1"),
                  retype("short_factor", np.float16), set_param(attention_factor=1.0)]),
    "mrope": (ROPE_RUN + ["--seq", "32", "--param", "base=100", "--param", "positions=mrope",
                          "--param", "mrope_layout=interleaved"],
              [set_param(mrope_layout="chunked"), set_param(mrope_section="2:3:3"),
               set_param(mrope_section="2:2:3"), set_param(positions="linear"),
               edit_array("pos_ids", lambda a: a[[0, 2, 1]], "pos_ids rows h and w swapped"),
               retype("pos_ids", np.float32)]),
    "xpos": (ROPE_RUN + ["--seq", "5", "--param", "offset=0", "--param", "style=gptj",
                         "--param", "xpos_scale_base=512", "--param", "tensor=q"],
             [set_param(tensor="k"), set_param(xpos_scale_base=0.0), set_param(xpos_scale_base=256.0),
              set_param(offset=1), set_param(scaling="linear", factor=1.0)]),
    "fairseq": (["--variant", "abs.sinusoidal", "--seq", "7", "--param", "d_model=15", "--param", "offset=3",
                 "--param", "layout=fairseq", "--param", "padding_idx=1", "--dtype", "f32"],
                [set_param(padding_idx=2), set_param(padding_idx=-1), set_param(layout="concat"),
                 set_param(padding_idx=1.5)]),
}


def dump(exe, args, folder, report):
    cmd = [exe, "run"] + args + ["--dump", folder, "--out", report, "--quiet", "--benchmark_min_time=0.001",
                                 "--no-peak"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def check_forms(exe, work):
    """Each form's clean case passes and each of its corruptions fails; returns the misses."""
    failures = 0
    for label, (args, corruptions) in FORMS.items():
        clean = os.path.join(work, "forms", label, "clean")
        dump(exe, args, clean, os.path.join(work, "forms", label, "report.json"))
        cases = sorted(os.listdir(clean))
        rc, out = check(clean)
        if rc != 0 or len(cases) != 1:
            print(out)
            print(f"MISS {label}: the clean dump ({len(cases)} cases) does not pass")
            failures += 1
            continue
        print(f"ok   {label}: clean case passes: {out.splitlines()[0][:150]}")
        for n, corrupt in enumerate(corruptions):
            root = os.path.join(work, "forms", label, f"c{n}")
            shutil.copytree(os.path.join(clean, cases[0]), os.path.join(root, cases[0]))
            corrupt(os.path.join(root, cases[0]))
            rc, out = check(root)
            line = next((x for x in out.splitlines() if x.startswith(cases[0])), "")
            caught = rc != 0 and "  FAIL (" in line
            failures += not caught
            what = f"{label}: {corrupt.__name__}"
            print(f"{'ok  ' if caught else 'MISS'} {what:<46} exit {rc}: {line[len(cases[0]):][:150]}")
    return failures


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
    failures += check_forms(exe, work)
    print(f"{failures} corruption(s) not caught" if failures else "every corruption was caught")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
