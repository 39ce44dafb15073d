#!/usr/bin/python3
"""Check pebench `run --dump DIR` folders against an independent NumPy float64 reference.

usage: check_dumps.py DIR [DIR...]

Each DIR is a dump folder holding one sub-folder per case (or a case folder
itself). For every case: validate the dump's form (meta.json, tensor names,
shapes and dtypes against encodings.md), recompute every output from the
dumped inputs with spec_ref.py, and compare with the spec's metrics and
ceilings. One line per case; exit status 1 if any case fails, is malformed or
names a variant this checker does not know, 2 on bad usage.
"""
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spec_ref as ref  # noqa: E402

# encodings.md section 0: nmse ceilings per storage dtype.
CEILING = {"f32": 1e-6, "f16": 1e-3}
# Unit roundoff of the storage dtype (one rounding of a stored value).
UNIT_ROUNDOFF = {"f32": 2.0**-24, "f16": 2.0**-11}
F32_EPS = 2.0**-24

# encodings.md section 5.
SPEC_PARAM_KEYS = {
    "offset", "base", "layout", "alpha", "substeps", "dt", "kernel", "groups", "vocab", "table_len",
    "rotary_dim", "style", "scaling", "factor", "max_pos", "orig_max_pos", "beta_fast", "beta_slow",
    "low_freq_factor", "high_freq_factor", "attention_factor", "scale", "num_buckets", "max_distance",
    "bidirectional", "max_rel", "position_buckets", "max_relative_positions",
}
SHAPE_KEYS = {"batch", "heads", "kv_heads", "seq", "kv_seq", "dim", "d_model", "causal", "dtype", "impl"}
BOOL_KEYS = {"causal", "bidirectional"}
STRING_KEYS = {"dtype", "impl", "layout", "style", "scaling"}

ABS_KEYS = {"batch", "seq", "d_model", "dtype", "impl"}
ROPE_KEYS = {"rotary_dim", "style", "base", "scaling", "factor", "max_pos", "orig_max_pos", "beta_fast",
             "beta_slow", "low_freq_factor", "high_freq_factor", "attention_factor"}
ATTN_KEYS = {"batch", "heads", "kv_heads", "seq", "kv_seq", "dim", "causal", "dtype", "impl", "scale"}
ATTN_IMPLS = {"naive", "flash"}

NPY_DTYPE = {"f32": "<f4", "f16": "<f2", "i32": "<i4"}


class Malformed(Exception):
    """The dump does not match the spec's form for its variant."""


class Variant:
    """What encodings.md says about one variant: tensors, their shapes, params, reference."""

    def __init__(self, inputs, outputs, keys, shapes, compute, impls=None, int_tensors=(), checks=None,
                 bounds=None):
        self.inputs = inputs
        self.outputs = outputs
        self.keys = keys  # params that must be present
        self.shapes = shapes  # params -> {name: shape}
        self.compute = compute
        self.impls = impls  # allowed impl values, None = not constrained by the spec
        self.int_tensors = set(int_tensors)
        self.checks = checks  # (tensors, params) -> raise Malformed on a violated precondition
        self.bounds = bounds  # (tensors, refs, params) -> {output: (nmse_bound, abs_bound or None, why)}


def need(cond, msg):
    if not cond:
        raise Malformed(msg)


# --- shapes ---------------------------------------------------------------


def _bnd(p):
    return [p["batch"], p["seq"], p["d_model"]]


def _attn_shapes(p, extra=None):
    B, H, Hkv, N, M, D = p["batch"], p["heads"], p["kv_heads"], p["seq"], p["kv_seq"], p["dim"]
    s = {"q": [B, H, N, D], "k": [B, Hkv, M, D], "v": [B, Hkv, M, D], "o": [B, H, N, D]}
    s.update(extra(p) if extra else {})
    return s


# --- preconditions --------------------------------------------------------


def _positions_fit(p, rows, what):
    need(p["offset"] + p["seq"] <= rows, f"offset+seq={p['offset'] + p['seq']} exceeds {what}={rows}")


def _check_learned(t, p):
    _positions_fit(p, p["table_len"], "table_len")


def _check_hierarchical(t, p):
    n0 = p["table_len"]
    last = p["offset"] + p["seq"] - 1
    need(last < n0 * n0, f"positions up to {last} need p < table_len^2={n0 * n0}")
    need(p["alpha"] != 1, "alpha=1 divides by zero")


def _check_even_d(t, p):
    need(p["d_model"] % 2 == 0, f"d_model={p['d_model']} must be even")


def _check_complex_order(t, p):
    tok = t["tokens"]
    need(tok.size == 0 or (tok.min() >= 0 and tok.max() < p["vocab"]),
         f"tokens outside [0, vocab={p['vocab']}): min {tok.min()}, max {tok.max()}")


def _check_conv(t, p):
    need(p["kernel"] % 2 == 1, f"kernel={p['kernel']} must be odd")


def _check_conv_grouped(t, p):
    need(p["groups"] > 0 and p["d_model"] % p["groups"] == 0,
         f"d_model={p['d_model']} is not divisible by groups={p['groups']}")


def _check_rope_params(p):
    R = p["rotary_dim"]
    need(R > 0 and R % 2 == 0 and R <= p["dim"], f"rotary_dim={R} must be even, positive and <= dim={p['dim']}")
    need(p["style"] in ("neox", "gptj"), f"style={p['style']!r}")
    need(p["scaling"] in ("none", "linear", "ntk", "yarn", "llama3"), f"scaling={p['scaling']!r}")


def _check_attn(t, p):
    need(p["kv_heads"] > 0 and p["heads"] % p["kv_heads"] == 0,
         f"heads={p['heads']} is not divisible by kv_heads={p['kv_heads']}")
    need(p["kv_seq"] >= p["seq"], f"kv_seq={p['kv_seq']} < seq={p['seq']}")


def _check_attn_rope(t, p):
    _check_attn(t, p)
    _check_rope_params(p)


# --- error growth with position (encodings.md: "document the growth") -----


def _rope_bound(pmax, th_max):
    """f32 angle a = p*th' is rounded once: |da| <= p*th'*2^-24, so each rotated
    element moves by at most |x|*|da|*af and nmse <= (pmax*th'_max*2^-24)^2;
    a 2x margin covers the f32 sin/cos rounding. Never tighter than the ceiling."""
    return (2.0 * pmax * th_max * F32_EPS) ** 2


def _bounds_rope_apply(t, r, p):
    N = p["seq"]
    inv, _ = ref.rope_inv_freq(p, p["offset"] + N)
    g = _rope_bound(p["offset"] + N - 1, float(inv.max()))
    return {"y": (g, None, f"rope angle growth (2*pmax*th*2^-24)^2={g:.2g}")}


def _bounds_attn_rope(t, r, p):
    inv, _ = ref.rope_inv_freq(p, p["kv_seq"])
    # Both q and k rotate (scores gain two angle errors), so twice the rope.apply figure.
    g = 4.0 * _rope_bound(p["kv_seq"] - 1, float(inv.max()))
    return {"o": (g, None, f"rope angle growth={g:.2g}")}


# Recurrence bound per step: the f32 coefficients cos th, sin th are rounded
# (angle and magnitude off by <= 2^-24 each) and the two products and the sum
# of each new component round (<= 2 more units): <= 4*2^-24 per step, and the
# same systematic error repeats every step, so it grows linearly, not as a
# random walk. A log-depth scan composes R^(2^k) whose angle error doubles with
# k: also <= c*p*2^-24. We allow 8*(p+1)*2^-24 absolute on pos (|pos| <= 1),
# plus the storage rounding; y = x + pos adds the rounding of the sum.
RECURRENT_STEP_UNITS = 8.0


def _bounds_recurrent(t, r, p):
    u = UNIT_ROUNDOFF[p["dtype"]]
    pos_p = (p["offset"] + np.arange(p["seq"]))[:, None].astype(np.float64)
    growth = RECURRENT_STEP_UNITS * (pos_p + 1) * F32_EPS  # [N,1]
    abs_pos = np.broadcast_to(growth + u, r["pos"].shape)
    abs_y = growth[None] + 2 * u * (np.abs(t["x"]) + 1)
    out = {}
    for name, a in (("pos", abs_pos), ("y", abs_y)):
        den = float(np.sum(r[name] ** 2))
        g = float(np.sum(a**2)) / den if den > 0 else 0.0
        out[name] = (g, a, f"recurrence growth 8*(p+1)*2^-24 + storage; nmse allowance {g:.2g}")
    return out


# --- the catalogue --------------------------------------------------------


def _abs(inputs, outputs, keys, shapes, compute, **kw):
    return Variant(inputs, outputs, ABS_KEYS | set(keys), shapes, compute, **kw)


def _attn(extra_inputs, extra_keys, extra_shapes, compute, outputs=("o",), checks=_check_attn, **kw):
    return Variant(["q", "k", "v"] + list(extra_inputs), list(outputs), ATTN_KEYS | set(extra_keys),
                   lambda p: _attn_shapes(p, extra_shapes), compute, impls=ATTN_IMPLS, checks=checks, **kw)


def _t5_table(p):
    return {"bias_table": [p["num_buckets"], p["heads"]]}


VARIANTS = {
    "abs.learned": _abs(["x", "table"], ["y"], {"offset", "table_len"},
                        lambda p: {"x": _bnd(p), "table": [p["table_len"], p["d_model"]], "y": _bnd(p)},
                        ref.abs_learned, checks=_check_learned),
    "abs.sinusoidal": _abs(["x"], ["y"], {"offset", "base", "layout"},
                           lambda p: {"x": _bnd(p), "y": _bnd(p)}, ref.abs_sinusoidal, checks=_check_even_d),
    "abs.multiplicative": _abs(["x", "table"], ["y"], {"offset", "table_len"},
                               lambda p: {"x": _bnd(p), "table": [p["table_len"], p["d_model"]], "y": _bnd(p)},
                               ref.abs_multiplicative, checks=_check_learned),
    "abs.hierarchical": _abs(["x", "table"], ["y"], {"offset", "table_len", "alpha"},
                             lambda p: {"x": _bnd(p), "table": [p["table_len"], p["d_model"]], "y": _bnd(p)},
                             ref.abs_hierarchical, checks=_check_hierarchical),
    "abs.recurrent": _abs(["x"], ["y", "pos"], {"offset", "base"},
                          lambda p: {"x": _bnd(p), "y": _bnd(p), "pos": [p["seq"], p["d_model"]]},
                          ref.abs_recurrent, impls={"sequential", "scan"}, checks=_check_even_d,
                          bounds=_bounds_recurrent),
    "abs.floater": _abs(["x", "p0", "w1", "b1", "w2", "b2"], ["y", "pos"], {"substeps", "dt"},
                        lambda p: {"x": _bnd(p), "p0": [p["d_model"]], "w1": [p["d_model"], p["d_model"] + 1],
                                   "b1": [p["d_model"]], "w2": [p["d_model"], p["d_model"] + 1],
                                   "b2": [p["d_model"]], "y": _bnd(p), "pos": [p["seq"], p["d_model"]]},
                        ref.abs_floater),
    "abs.complex_order": _abs(["tokens", "amp", "freq", "phase"], ["zr", "zi"], {"offset", "vocab"},
                              lambda p: {"tokens": [p["batch"], p["seq"]],
                                         **{n: [p["vocab"], p["d_model"]] for n in ("amp", "freq", "phase")},
                                         "zr": _bnd(p), "zi": _bnd(p)},
                              ref.abs_complex_order, int_tensors=["tokens"], checks=_check_complex_order),
    "abs.conv": _abs(["x", "w", "bias"], ["y"], {"kernel"},
                     lambda p: {"x": _bnd(p), "w": [p["d_model"], p["kernel"]], "bias": [p["d_model"]],
                                "y": _bnd(p)},
                     ref.abs_conv, checks=_check_conv),
    "abs.conv_grouped": _abs(["x", "w", "bias"], ["y"], {"kernel", "groups"},
                             lambda p: {"x": _bnd(p),
                                        "w": [p["d_model"], p["d_model"] // max(p["groups"], 1), p["kernel"]],
                                        "bias": [p["d_model"]], "y": _bnd(p)},
                             ref.abs_conv_grouped, checks=_check_conv_grouped),
    "rope.apply": Variant(["x"], ["y"], {"batch", "heads", "seq", "dim", "offset", "dtype", "impl"} | ROPE_KEYS,
                          lambda p: {n: [p["batch"], p["heads"], p["seq"], p["dim"]] for n in ("x", "y")},
                          ref.rope_apply, checks=lambda t, p: _check_rope_params(p), bounds=_bounds_rope_apply),
    "attn.nope": _attn([], [], None, ref.attn_nope),
    "attn.rope": _attn([], ROPE_KEYS, None, ref.attn_rope, checks=_check_attn_rope, bounds=_bounds_attn_rope),
    "attn.alibi": _attn([], [], None, ref.attn_alibi),
    "attn.t5": _attn(["bias_table"], {"num_buckets", "max_distance", "bidirectional"}, _t5_table, ref.attn_t5),
    "attn.shaw": _attn(["rel_k", "rel_v"], {"max_rel"},
                       lambda p: {n: [2 * p["max_rel"] + 1, p["dim"]] for n in ("rel_k", "rel_v")}, ref.attn_shaw),
    "attn.xl": _attn(["rk", "u", "vb"], [],
                     lambda p: {"rk": [p["heads"], p["kv_seq"] + p["seq"] - 1, p["dim"]],
                                "u": [p["heads"], p["dim"]], "vb": [p["heads"], p["dim"]]}, ref.attn_xl),
    "attn.deberta": _attn(["kr", "qr"], {"position_buckets", "max_relative_positions"},
                          lambda p: {n: [p["heads"], 2 * p["position_buckets"], p["dim"]] for n in ("kr", "qr")},
                          ref.attn_deberta),
    "attn.tupe": _attn(["pq", "pk", "bias_table"], {"num_buckets", "max_distance", "bidirectional"},
                       lambda p: {"pq": [p["heads"], p["kv_seq"], p["dim"]], "pk": [p["heads"], p["kv_seq"], p["dim"]],
                                  **_t5_table(p)}, ref.attn_tupe),
    "attn.complex": _attn(["qi", "ki", "vi"], [],
                          lambda p: {"qi": [p["batch"], p["heads"], p["seq"], p["dim"]],
                                     "ki": [p["batch"], p["kv_heads"], p["kv_seq"], p["dim"]],
                                     "vi": [p["batch"], p["kv_heads"], p["kv_seq"], p["dim"]],
                                     "oi": [p["batch"], p["heads"], p["seq"], p["dim"]]},
                          ref.attn_complex, outputs=("o", "oi")),
}


# --- loading --------------------------------------------------------------


def read_npy(path):
    """The array and its header, insisting on NPY 1.0, little-endian, C order."""
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        need(version == (1, 0), f"{os.path.basename(path)}: NPY version {version}, expected 1.0")
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        need(not fortran, f"{os.path.basename(path)}: Fortran order")
        count = int(np.prod(shape)) if shape else 1
        data = np.fromfile(f, dtype=dtype, count=count)
        need(data.size == count, f"{os.path.basename(path)}: {data.size} values, header says {count}")
        need(f.read(1) == b"", f"{os.path.basename(path)}: trailing bytes after the data")
    return data.reshape(shape), dtype.str, list(shape)


def check_params(v, params, meta):
    missing = sorted(v.keys - params.keys())
    need(not missing, f"params lack {missing}")
    unknown = sorted(params.keys() - SPEC_PARAM_KEYS - SHAPE_KEYS)
    need(not unknown, f"params carry keys outside encodings.md section 5: {unknown}")
    for k, val in params.items():
        if k in BOOL_KEYS:
            need(isinstance(val, bool), f"param {k}={val!r} is not a JSON boolean")
        elif k in STRING_KEYS:
            need(isinstance(val, str), f"param {k}={val!r} is not a string")
        else:
            need(isinstance(val, (int, float)) and not isinstance(val, bool) and math.isfinite(val),
                 f"param {k}={val!r} is not a finite number")
    need(params["dtype"] in CEILING, f"dtype={params['dtype']!r} is neither f32 nor f16")
    need(params["dtype"] == meta.get("dtype"), f"meta dtype {meta.get('dtype')!r} != params dtype {params['dtype']!r}")
    need(params["impl"] == meta.get("impl"), f"meta impl {meta.get('impl')!r} != params impl {params['impl']!r}")
    if v.impls is not None:
        need(params["impl"] in v.impls, f"impl={params['impl']!r} is not one of {sorted(v.impls)}")


def load_case(folder):
    """(meta, variant, params, tensors as float64/int64) after checking the dump's form."""
    meta_path = os.path.join(folder, "meta.json")
    need(os.path.isfile(meta_path), "no meta.json")
    try:
        with open(meta_path) as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        raise Malformed(f"meta.json unreadable: {e}")
    for key in ("id", "variant", "impl", "dtype", "params", "inputs", "outputs", "tensors"):
        need(key in meta, f"meta.json lacks '{key}'")
    need(meta["id"] == os.path.basename(os.path.normpath(folder)),
         f"meta id {meta['id']!r} != folder name {os.path.basename(os.path.normpath(folder))!r}")
    name = meta["variant"]
    need(name in VARIANTS, f"unknown variant {name!r}: this checker has no reference for it")
    v = VARIANTS[name]
    params = meta["params"]
    need(isinstance(params, dict), "params is not an object")
    check_params(v, params, meta)

    need(sorted(meta["inputs"]) == sorted(v.inputs), f"inputs {sorted(meta['inputs'])} != spec {sorted(v.inputs)}")
    need(sorted(meta["outputs"]) == sorted(v.outputs),
         f"outputs {sorted(meta['outputs'])} != spec {sorted(v.outputs)}")
    names = set(v.inputs) | set(v.outputs)
    need(set(meta["tensors"]) == names, f"meta tensors {sorted(meta['tensors'])} != spec {sorted(names)}")
    files = {f[:-4] for f in os.listdir(folder) if f.endswith(".npy")}
    need(files == names, f"npy files {sorted(files)} != spec tensors {sorted(names)}")

    expected = v.shapes(params)
    tensors = {}
    for n in sorted(names):
        arr, descr, shape = read_npy(os.path.join(folder, n + ".npy"))
        want_dtype = "i32" if n in v.int_tensors else params["dtype"]
        m = meta["tensors"][n]
        need(m.get("dtype") == want_dtype, f"{n}: meta dtype {m.get('dtype')!r}, spec says {want_dtype}")
        need(descr == NPY_DTYPE[want_dtype], f"{n}: file dtype {descr}, expected {NPY_DTYPE[want_dtype]}")
        need(list(m.get("shape", [])) == shape, f"{n}: file shape {shape} != meta shape {m.get('shape')}")
        need(shape == list(expected[n]), f"{n}: shape {shape} != spec shape {list(expected[n])} from params")
        tensors[n] = arr.astype(np.int64 if n in v.int_tensors else np.float64)
    for n in v.inputs:
        if n not in v.int_tensors:
            need(np.all(np.isfinite(tensors[n])), f"input {n} holds non-finite values")
    if v.checks:
        v.checks(tensors, params)
    return meta, v, params, tensors


# --- comparison -----------------------------------------------------------


def metrics(out, r):
    diff = out - r
    num = float(np.sum(diff * diff))
    den = float(np.sum(r * r))
    nmse = num / den if den > 0 else (0.0 if num == 0 else math.inf)
    max_abs = float(np.max(np.abs(diff))) if diff.size else 0.0
    ref_max = float(np.max(np.abs(r))) if r.size else 0.0
    max_rel = max_abs / ref_max if ref_max > 0 else (0.0 if max_abs == 0 else math.inf)
    if not np.all(np.isfinite(out)):
        nmse = max_abs = max_rel = math.nan
    return nmse, max_abs, max_rel


def peek_meta(folder):
    """meta.json's top-level fields as far as they can be read, for labelling a malformed case."""
    try:
        with open(os.path.join(folder, "meta.json")) as f:
            meta = json.load(f)
        return meta if isinstance(meta, dict) else {}
    except (OSError, ValueError):
        return {}


def check_case(folder):
    """(line, passed) for one case folder."""
    try:
        meta, v, params, tensors = load_case(folder)
    except Malformed as e:
        m = peek_meta(folder)
        fields = [os.path.basename(os.path.normpath(folder))]
        fields += [str(m.get(k, "-")) for k in ("variant", "impl", "dtype")]
        return f"{'  '.join(fields)}  nmse -  FAIL (malformed: {e})", False
    head = f"{meta['id']}  {meta['variant']}  {meta['impl']}  {meta['dtype']}"
    try:
        refs = v.compute({n: tensors[n] for n in v.inputs}, params)
        bounds = v.bounds(tensors, refs, params) if v.bounds else {}
    except (ValueError, KeyError, IndexError, ZeroDivisionError) as e:
        return f"{head}  nmse -  FAIL (reference cannot be formed: {type(e).__name__}: {e})", False
    ceiling = CEILING[params["dtype"]]
    worst = np.zeros(3)
    tightest = (-1.0, ceiling)  # (nmse / limit, limit) of the output nearest its limit
    problems = []
    for n in v.outputs:
        m = metrics(tensors[n], refs[n])
        worst = np.maximum(worst, m)  # NaN propagates
        allowance, abs_bound, why = bounds.get(n, (0.0, None, ""))
        limit = max(ceiling, allowance)
        tightest = max(tightest, (m[0] / limit if not math.isnan(m[0]) else math.inf, limit))
        if not m[0] <= limit:
            problems.append(f"{n}: nmse {m[0]:.3g} > {limit:.3g}" + (f" ({why})" if allowance > ceiling else ""))
        if abs_bound is not None:
            bound = np.broadcast_to(abs_bound, refs[n].shape)
            err = np.abs(tensors[n] - refs[n])
            over = ~(err <= bound)
            if np.any(over):
                at = np.unravel_index(int(np.argmax(over)), over.shape)
                problems.append(f"{n}: {int(over.sum())} values beyond the growth bound, first at {list(at)} "
                                f"(|err| {err[at]:.3g} > {bound[at]:.3g}; {why})")
    status = "PASS" if not problems else "FAIL (" + "; ".join(problems) + ")"
    nmse, max_abs, max_rel = worst.tolist()
    return (f"{head}  nmse {nmse:.3g} (limit {tightest[1]:.2g})  max_abs {max_abs:.3g}  max_rel {max_rel:.3g}  "
            f"{status}"), not problems


def case_folders(root):
    if os.path.isfile(os.path.join(root, "meta.json")):
        return [root]
    return sorted(os.path.join(root, d) for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))


def main(argv):
    if len(argv) < 2 or any(a in ("-h", "--help") for a in argv[1:]):
        print(__doc__.strip())
        return 2
    total = failed = 0
    for root in argv[1:]:
        if not os.path.isdir(root):
            print(f"check_dumps: error: {root} is not a directory", file=sys.stderr)
            return 2
        for folder in case_folders(root):
            line, ok = check_case(folder)
            print(line, flush=True)
            total += 1
            failed += not ok
    print(f"{total} cases checked: {total - failed} passed, {failed} failed")
    if total == 0:
        print("check_dumps: error: no case folder found", file=sys.stderr)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
