#!/usr/bin/python3
"""Check pebench `run --dump DIR` folders against an independent NumPy float64 reference.

usage: check_dumps.py [--given-attention-factor] DIR [DIR...]

Each DIR is a dump folder holding one sub-folder per case (or a case folder
itself). For every case: validate the dump's form (meta.json, tensor names,
shapes and dtypes against encodings.md), recompute every output from the
dumped inputs with spec_ref.py, and compare with the spec's metrics and
ceilings. One line per case; exit status 1 if any case fails, is malformed or
names a variant this checker does not know, 2 on bad usage.

A recorded `attention_factor` must be the spec's default for its scaling
(YaRN's from mscale/mscale_all_dim, LongRoPE's from factor and orig_max_pos,
else 1): the sweep never sets one. --given-attention-factor drops that check
for dumps of runs that set it (the rotation is then checked with the recorded
number only).
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
    "bidirectional", "max_rel", "position_buckets", "max_relative_positions", "mscale", "mscale_all_dim",
    "truncate", "positions", "mrope_section", "mrope_layout", "xpos_scale_base", "tensor", "padding_idx",
    "window", "chunk", "sink_tokens", "softcap", "sink_logits", "kind", "mlp_width", "fire_c", "fire_L", "eps",
    "npos", "cope_nodiv",
}
# Section 5 keys whose semantics (section 3's masks and modifiers) this reference does
# not implement: a dump carrying one is refused rather than checked wrongly.
UNCHECKED_PARAM_KEYS = {"window", "chunk", "sink_tokens", "softcap", "sink_logits"}
SHAPE_KEYS = {"batch", "heads", "kv_heads", "seq", "kv_seq", "dim", "d_model", "causal", "dtype", "impl"}
BOOL_KEYS = {"causal", "bidirectional", "truncate", "cope_nodiv"}
STRING_KEYS = {"dtype", "impl", "kind", "layout", "style", "scaling", "positions", "mrope_section", "mrope_layout", "tensor"}
INT_KEYS = {"padding_idx", "mlp_width", "fire_L", "npos"}

ABS_KEYS = {"batch", "seq", "d_model", "dtype", "impl"}
ROPE_KEYS = {"rotary_dim", "style", "base", "scaling", "factor", "max_pos", "orig_max_pos", "beta_fast",
             "beta_slow", "low_freq_factor", "high_freq_factor", "attention_factor", "mscale", "mscale_all_dim",
             "truncate", "positions", "mrope_section", "mrope_layout", "xpos_scale_base"}
ATTN_KEYS = {"batch", "heads", "kv_heads", "seq", "kv_seq", "dim", "causal", "dtype", "impl", "scale"}
ATTN_IMPLS = {"naive", "flash"}
ROPE_SCALINGS = ("none", "linear", "ntk", "yarn", "llama3", "longrope")
LONGROPE_INPUTS = ["short_factor", "long_factor"]  # f32 whatever the dtype

# --given-attention-factor: the runs set attention_factor, so only the rotation can check it.
OPTIONS = {"given_attention_factor": False}

NPY_DTYPE = {"f32": "<f4", "f16": "<f2", "i32": "<i4"}


class Malformed(Exception):
    """The dump does not match the spec's form for its variant."""


class Variant:
    """What encodings.md says about one variant: tensors, their shapes, params, reference."""

    def __init__(self, inputs, outputs, keys, shapes, compute, impls=None, int_tensors=(), checks=None,
                 bounds=None, f32_tensors=()):
        self.inputs = inputs  # a list, or params -> list where the params add inputs
        self.outputs = outputs
        self.keys = keys  # params that must be present
        self.shapes = shapes  # params -> {name: shape}
        self.compute = compute
        self.impls = impls  # allowed impl values, None = not constrained by the spec
        self.int_tensors = set(int_tensors)
        self.f32_tensors = set(f32_tensors)  # stored as f32 whatever the case's dtype
        self.checks = checks  # (tensors, params) -> raise Malformed on a violated precondition
        self.bounds = bounds  # (tensors, refs, params) -> {output: (nmse_bound, abs_bound or None, why)}

    def input_names(self, params):
        return list(self.inputs(params) if callable(self.inputs) else self.inputs)

    def tensor_dtype(self, name, params):
        return "i32" if name in self.int_tensors else "f32" if name in self.f32_tensors else params["dtype"]


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


def _check_sinusoidal(t, p):
    need(p["layout"] in ("interleaved", "concat", "fairseq"), f"layout={p['layout']!r}")
    if p["layout"] == "fairseq":  # h = floor(d/2) >= 2; an odd d gets a last column of 0
        need(p["d_model"] >= 4, f"layout=fairseq needs d_model >= 4 (h = floor(d/2) >= 2), got {p['d_model']}")
    else:
        _check_even_d(t, p)


def _check_complex_order(t, p):
    tok = t["tokens"]
    need(tok.size == 0 or (tok.min() >= 0 and tok.max() < p["vocab"]),
         f"tokens outside [0, vocab={p['vocab']}): min {tok.min()}, max {tok.max()}")


def _check_conv(t, p):
    need(p["kernel"] % 2 == 1, f"kernel={p['kernel']} must be odd")


def _check_conv_grouped(t, p):
    need(p["groups"] > 0 and p["d_model"] % p["groups"] == 0,
         f"d_model={p['d_model']} is not divisible by groups={p['groups']}")


def _rope_inputs(base):
    """Inputs of a rope case: LongRoPE adds its factor lists, M-RoPE pos_ids."""
    def names(p):
        extra = LONGROPE_INPUTS if p.get("scaling") == "longrope" else []
        return list(base) + extra + (["pos_ids"] if p.get("positions") == "mrope" else [])
    return names


def _rope_len(p):
    """L of NTK, LongRoPE and xPos: rope.apply offset + N, attn.rope M."""
    return p["kv_seq"] if "kv_seq" in p else p["offset"] + p["seq"]


def _rope_extra_shapes(p, cols):
    s = {n: [p["rotary_dim"] // 2] for n in LONGROPE_INPUTS}
    s["pos_ids"] = [3, cols]
    return s


def _check_rope_params(p, t=None):
    """encodings.md section 2's constraints on one rope case's params (and its rope inputs)."""
    R = p["rotary_dim"]
    need(isinstance(R, int) and R > 0 and R % 2 == 0 and R <= p["dim"],
         f"rotary_dim={R} must be even, positive and <= dim={p['dim']}")
    need(p["style"] in ("neox", "gptj"), f"style={p['style']!r}")
    scaling = p["scaling"]
    need(scaling in ROPE_SCALINGS, f"scaling={scaling!r} is not one of {', '.join(ROPE_SCALINGS)}")
    need(p["base"] > 0, f"base={p['base']} must be positive (th_t = base^(-2t/R))")
    need(scaling != "yarn" or p["base"] != 1, "yarn divides by ln base: base must not be 1")
    # The spec leaves factor's range open; every scaling divides by it or takes its log: require > 0.
    need(scaling == "none" or p["factor"] > 0, f"factor={p['factor']} must be positive for scaling={scaling}")
    if scaling == "ntk":
        need(R > 2 and p["max_pos"] > 0, "ntk needs rotary_dim > 2 (R/(R-2)) and max_pos > 0")
    if scaling in ("yarn", "llama3", "longrope"):
        need(p["orig_max_pos"] > (1 if scaling == "longrope" else 0),
             f"orig_max_pos={p['orig_max_pos']} must be positive (longrope: > 1, ln L0 divides)")
    if scaling == "yarn":
        need(p["beta_fast"] > 0 and p["beta_slow"] > 0, "beta_fast and beta_slow must be positive (ln L0/(2 pi r))")
    if scaling == "llama3":
        need(p["high_freq_factor"] > p["low_freq_factor"], "llama3 needs high_freq_factor > low_freq_factor")
    # mscale / mscale_all_dim: 0 means unset; the spec gives negative values no meaning (and a
    # negative m can make g(s, mscale_all_dim) = 0, a division by zero), so they must be >= 0.
    need(p["mscale"] >= 0 and p["mscale_all_dim"] >= 0,
         f"mscale={p['mscale']} and mscale_all_dim={p['mscale_all_dim']} must not be negative (0 = unset)")
    need(p["positions"] in ("linear", "mrope"), f"positions={p['positions']!r} is neither linear nor mrope")
    need(p["mrope_layout"] in ("chunked", "interleaved"), f"mrope_layout={p['mrope_layout']!r}")
    if p["positions"] == "mrope":
        try:
            section = ref.parse_mrope_section(p["mrope_section"])
        except ValueError as e:
            raise Malformed(str(e))
        problem = ref.mrope_section_problem(R, section, p["mrope_layout"])
        need(problem is None, problem)
    sb = p["xpos_scale_base"]
    need(sb >= 0, f"xpos_scale_base={sb} must not be negative (0 = off)")
    if sb > 0:  # "other scalings and M-RoPE are refused"
        need(scaling == "none" and p["positions"] == "linear",
             f"xPos takes scaling=none and positions=linear, got scaling={scaling}, positions={p['positions']}")
    if "tensor" in p:
        need(p["tensor"] in ("q", "k"), f"tensor={p['tensor']!r} is neither q nor k")
    if t is None:
        return
    if scaling == "longrope":
        for n in LONGROPE_INPUTS:  # the suite's fill: uniform in [1, s] (then rounded to f32)
            f = t[n]
            need(np.all(f > 0), f"{n} holds non-positive values (th' = th / ext)")
            top = max(float(p["factor"]), 1.0) * (1 + F32_EPS)
            need(np.all((f >= 1 - F32_EPS) & (f <= top)),
                 f"{n} outside the spec's fill [1, factor={p['factor']}]: min {f.min()}, max {f.max()}")
    if p["positions"] == "mrope":
        want = ref.mrope_pos_ids(t["pos_ids"].shape[1])
        bad = np.argwhere(t["pos_ids"] != want)
        need(bad.size == 0, f"pos_ids differ from the spec's fill (Qwen2-VL text, one image, text) first at "
                            f"{bad[0].tolist() if bad.size else None}")
    if not OPTIONS["given_attention_factor"]:
        # attn.rope's `scale` is not checked against a default: the spec puts DeepSeek's
        # g(s, mscale_all_dim)^2 in "the attention's scale" without making it scale's default,
        # and `scale` is always written out as the number used, which the reference uses.
        try:
            want = ref.default_attention_factor(p, _rope_len(p), {n: t[n] for n in LONGROPE_INPUTS if n in t})
        except ValueError as e:
            raise Malformed(f"no default attention_factor: {e}")
        af = float(p["attention_factor"])
        need(math.isclose(af, want, rel_tol=1e-12, abs_tol=0.0),
             f"attention_factor={af!r} is not the spec's default {want!r} for scaling={scaling} "
             f"(mscale={p['mscale']}, mscale_all_dim={p['mscale_all_dim']}, factor={p['factor']}); "
             "--given-attention-factor if the run set it")


def _check_attn(t, p):
    need(p["kv_heads"] > 0 and p["heads"] % p["kv_heads"] == 0,
         f"heads={p['heads']} is not divisible by kv_heads={p['kv_heads']}")
    need(p["kv_seq"] >= p["seq"], f"kv_seq={p['kv_seq']} < seq={p['seq']}")


def _check_attn_rope(t, p):
    _check_attn(t, p)
    need("tensor" not in p, "attn.rope rotates both q and k: `tensor` is rope.apply's alone")
    _check_rope_params(p, t)


# --- error growth with position (encodings.md: "document the growth") -----


def _rope_bound(pmax, th_max):
    """f32 angle a = p*th' is rounded once: |da| <= p*th'*2^-24, so each rotated
    element moves by at most |x|*|da|*af and nmse <= (pmax*th'_max*2^-24)^2;
    a 2x margin covers the f32 sin/cos rounding. Never tighter than the ceiling."""
    return (2.0 * pmax * th_max * F32_EPS) ** 2


def _xpos_bound(p, pmax):
    """xPos's factor zeta_t^e, e = (p - c)/scale_base, from an f32 exponent and pow/exp2:
    relative error <= (|e ln zeta_0| + 2) * 2^-24 per value (zeta_0 is the farthest from 1);
    squared and doubled like the angle's. 0 when xPos is off."""
    sb = p["xpos_scale_base"]
    if not sb:
        return 0.0
    c = ref.xpos_centre(_rope_len(p))
    e = max(abs(pmax - c), c) / sb
    return (2.0 * (e * abs(math.log(ref.xpos_zeta(p["rotary_dim"])[0])) + 2.0) * F32_EPS) ** 2


def _rope_pmax(t, p, linear_max):
    return int(t["pos_ids"].max()) if p["positions"] == "mrope" and t["pos_ids"].size else linear_max


def _bounds_rope_apply(t, r, p):
    N = p["seq"]
    inv, _ = ref.rope_inv_freq(p, p["offset"] + N, ref.rope_factors(t))
    pmax = _rope_pmax(t, p, p["offset"] + N - 1)
    g = _rope_bound(pmax, float(inv.max())) + _xpos_bound(p, pmax)
    return {"y": (g, None, f"rope angle growth (2*pmax*th*2^-24)^2 (+ xPos factor)={g:.2g}")}


def _bounds_attn_rope(t, r, p):
    inv, _ = ref.rope_inv_freq(p, p["kv_seq"], ref.rope_factors(t))
    pmax = _rope_pmax(t, p, p["kv_seq"] - 1)
    # Both q and k rotate (scores gain two angle errors), so twice the rope.apply figure.
    g = 4.0 * (_rope_bound(pmax, float(inv.max())) + _xpos_bound(p, pmax))
    return {"o": (g, None, f"rope angle growth (+ xPos factor)={g:.2g}")}


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
    if callable(extra_inputs):
        inputs = lambda p: ["q", "k", "v"] + extra_inputs(p)  # noqa: E731
    else:
        inputs = ["q", "k", "v"] + list(extra_inputs)
    return Variant(inputs, list(outputs), ATTN_KEYS | set(extra_keys),
                   lambda p: _attn_shapes(p, extra_shapes), compute, impls=ATTN_IMPLS, checks=checks, **kw)


def _t5_table(p):
    return {"bias_table": [p["num_buckets"], p["heads"]]}


VARIANTS = {
    "abs.learned": _abs(["x", "table"], ["y"], {"offset", "table_len"},
                        lambda p: {"x": _bnd(p), "table": [p["table_len"], p["d_model"]], "y": _bnd(p)},
                        ref.abs_learned, checks=_check_learned),
    "abs.sinusoidal": _abs(["x"], ["y"], {"offset", "base", "layout", "padding_idx"},
                           lambda p: {"x": _bnd(p), "y": _bnd(p)}, ref.abs_sinusoidal, checks=_check_sinusoidal),
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
    "rope.apply": Variant(_rope_inputs(["x"]), ["y"],
                          {"batch", "heads", "seq", "dim", "offset", "dtype", "impl", "tensor"} | ROPE_KEYS,
                          lambda p: {**{n: [p["batch"], p["heads"], p["seq"], p["dim"]] for n in ("x", "y")},
                                     **_rope_extra_shapes(p, p["seq"])},
                          ref.rope_apply, checks=lambda t, p: _check_rope_params(p, t), bounds=_bounds_rope_apply,
                          int_tensors=["pos_ids"], f32_tensors=LONGROPE_INPUTS),
    "attn.nope": _attn([], [], None, ref.attn_nope),
    "attn.rope": _attn(_rope_inputs([]), ROPE_KEYS, lambda p: _rope_extra_shapes(p, p["kv_seq"]), ref.attn_rope,
                       checks=_check_attn_rope, bounds=_bounds_attn_rope, int_tensors=["pos_ids"],
                       f32_tensors=LONGROPE_INPUTS),
    "attn.alibi": _attn([], [], None, ref.attn_alibi),
    "attn.kerple": _attn(["r1", "r2"], {"kind"}, lambda p: {"r1": [p["heads"]], "r2": [p["heads"]]},
                         ref.attn_kerple, f32_tensors=["r1", "r2"]),
    "attn.fire": _attn(["w1", "b1", "w2", "b2"], {"mlp_width", "fire_c", "fire_L", "eps"},
                       lambda p: {"w1": [p["mlp_width"]], "b1": [p["mlp_width"]], "w2": [p["heads"], p["mlp_width"]],
                                  "b2": [p["heads"]]},
                       ref.attn_fire, f32_tensors=["w1", "b1", "w2", "b2"]),
    "attn.cope": _attn(["pos_emb"], {"npos", "cope_nodiv"}, lambda p: {"pos_emb": [p["npos"], p["dim"]]},
                       ref.attn_cope),
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
    unchecked = sorted(params.keys() & UNCHECKED_PARAM_KEYS)
    need(not unchecked, f"params carry section 5 keys this checker's reference does not implement: {unchecked}")
    for k, val in params.items():
        if k in BOOL_KEYS:
            need(isinstance(val, bool), f"param {k}={val!r} is not a JSON boolean")
        elif k in STRING_KEYS:
            need(isinstance(val, str), f"param {k}={val!r} is not a string")
        elif k in INT_KEYS:
            need(isinstance(val, int) and not isinstance(val, bool), f"param {k}={val!r} is not an integer")
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

    inputs = v.input_names(params)
    need(sorted(meta["inputs"]) == sorted(inputs), f"inputs {sorted(meta['inputs'])} != spec {sorted(inputs)}")
    need(sorted(meta["outputs"]) == sorted(v.outputs),
         f"outputs {sorted(meta['outputs'])} != spec {sorted(v.outputs)}")
    names = set(inputs) | set(v.outputs)
    need(set(meta["tensors"]) == names, f"meta tensors {sorted(meta['tensors'])} != spec {sorted(names)}")
    files = {f[:-4] for f in os.listdir(folder) if f.endswith(".npy")}
    need(files == names, f"npy files {sorted(files)} != spec tensors {sorted(names)}")

    expected = v.shapes(params)
    tensors = {}
    for n in sorted(names):
        arr, descr, shape = read_npy(os.path.join(folder, n + ".npy"))
        want_dtype = v.tensor_dtype(n, params)
        m = meta["tensors"][n]
        need(m.get("dtype") == want_dtype, f"{n}: meta dtype {m.get('dtype')!r}, spec says {want_dtype}")
        need(descr == NPY_DTYPE[want_dtype], f"{n}: file dtype {descr}, expected {NPY_DTYPE[want_dtype]}")
        need(list(m.get("shape", [])) == shape, f"{n}: file shape {shape} != meta shape {m.get('shape')}")
        need(shape == list(expected[n]), f"{n}: shape {shape} != spec shape {list(expected[n])} from params")
        tensors[n] = arr.astype(np.int64 if n in v.int_tensors else np.float64)
    for n in inputs:
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
        refs = v.compute({n: tensors[n] for n in v.input_names(params)}, params)
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
    args = list(argv[1:])
    OPTIONS["given_attention_factor"] = "--given-attention-factor" in args
    args = [a for a in args if a != "--given-attention-factor"]
    if not args or any(a in ("-h", "--help") for a in args):
        print(__doc__.strip())
        return 2
    total = failed = 0
    for root in args:
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
