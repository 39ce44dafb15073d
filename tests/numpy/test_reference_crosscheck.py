#!/usr/bin/python3
"""Cross-check spec_ref.py (vectorised) against scalar-loop readings of encodings.md,
and check_dumps.py's whole path on synthetic dumps of every variant.

The loop versions are written element by element from the spec's formulas, in
a different shape from spec_ref.py (explicit bounds tests instead of padding,
the recurrence stepped instead of its closed form, attention through the
spec's flash online softmax over key tiles instead of a full softmax), so an
indexing slip in either one shows up as a mismatch. The synthetic dumps use the
loop outputs, so check_dumps.py is exercised on every variant, including those
pebench does not register yet.

Run: /usr/bin/python3 tests/numpy/test_reference_crosscheck.py
"""
import io
import json
import math
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_dumps  # noqa: E402
import spec_ref as ref  # noqa: E402

# ---------------------------------------------------------------------------
# Scalar loop readings of the spec.
# ---------------------------------------------------------------------------


def loop_abs(variant, t, p):
    x = t.get("x")
    off = p.get("offset", 0)
    if variant == "abs.complex_order":
        tok = t["tokens"]
        B, N = tok.shape
        d = t["amp"].shape[1]
        zr, zi = np.zeros((B, N, d)), np.zeros((B, N, d))
        for b in range(B):
            for n in range(N):
                w = tok[b, n]
                for c in range(d):
                    arg = t["freq"][w, c] * (off + n) + t["phase"][w, c]
                    zr[b, n, c] = t["amp"][w, c] * math.cos(arg)
                    zi[b, n, c] = t["amp"][w, c] * math.sin(arg)
        return {"zr": zr, "zi": zi}
    B, N, d = x.shape
    y = np.zeros_like(x)
    out = {"y": y}
    if variant == "abs.recurrent":  # step P[k+1] = R P[k] from P[0] = (0,1,0,1,...)
        pos = np.zeros((N, d))
        P = np.tile([0.0, 1.0], d // 2)
        for k in range(off + N):
            if k >= off:
                pos[k - off] = P
            for tt in range(d // 2):
                th = p["base"] ** (-2.0 * tt / d)
                s, c = P[2 * tt], P[2 * tt + 1]
                P[2 * tt], P[2 * tt + 1] = s * math.cos(th) + c * math.sin(th), c * math.cos(th) - s * math.sin(th)
        out["pos"] = pos
    if variant == "abs.floater":
        W1, B1, W2, B2 = t["w1"], t["b1"], t["w2"], t["b2"]

        def h(time, P):
            hidden = [max(sum(W1[r, c] * P[c] for c in range(d)) + W1[r, d] * time + B1[r], 0.0) for r in range(d)]
            return np.array([sum(W2[r, c] * hidden[c] for c in range(d)) + W2[r, d] * time + B2[r] for r in range(d)])

        sub, dt = p["substeps"], p["dt"]
        step = dt / sub
        P = t["p0"].copy()
        pos = np.zeros((N, d))
        time = 0.0
        for n in range(N):
            pos[n] = P
            for s in range(sub):
                time = n * dt + s * step
                k1 = h(time, P)
                k2 = h(time + step / 2, P + step / 2 * k1)
                k3 = h(time + step / 2, P + step / 2 * k2)
                k4 = h(time + step, P + step * k3)
                P = P + step * (k1 + 2 * k2 + 2 * k3 + k4) / 6
        out["pos"] = pos
    if variant == "abs.conv_grouped":  # full padded conv, then drop the extra last output
        G, K = p["groups"], p["kernel"]
        dg = d // G
        n_full = N + 2 * (K // 2) - K + 1
        conv = np.zeros((B, n_full, d))
        for b in range(B):
            for n in range(n_full):
                for o in range(d):
                    g = o // dg
                    acc = t["bias"][o]
                    for c in range(dg):
                        for tap in range(K):
                            src = n + tap - K // 2
                            if 0 <= src < N:
                                acc += t["w"][o, c, tap] * x[b, src, g * dg + c]
                    conv[b, n, o] = acc
        conv = conv[:, :N]
        for idx in np.ndindex(conv.shape):
            y[idx] = x[idx] + 0.5 * conv[idx] * (1 + math.erf(conv[idx] / math.sqrt(2)))
        return out
    for b in range(B):
        for n in range(N):
            q = off + n
            for c in range(d):
                xv = x[b, n, c]
                if variant == "abs.learned":
                    y[b, n, c] = xv + t["table"][q, c]
                elif variant == "abs.multiplicative":
                    y[b, n, c] = xv * t["table"][q, c]
                elif variant == "abs.hierarchical":
                    a, tab = p["alpha"], t["table"]
                    n0 = tab.shape[0]
                    u = lambda i: (tab[i, c] - a * tab[0, c]) / (1 - a)  # noqa: E731
                    y[b, n, c] = xv + a * u(q // n0) + (1 - a) * u(q % n0)
                elif variant == "abs.sinusoidal" and p["layout"] == "fairseq":
                    h = d // 2  # columns [0,h) sin, [h,2h) cos, column 2h (odd d) zero
                    row = q + p["padding_idx"] + 1
                    if c == 2 * h:
                        y[b, n, c] = xv
                    else:
                        ang = row * math.exp(-(c % h) * math.log(p["base"]) / (h - 1))  # fairseq's own form
                        y[b, n, c] = xv + (math.sin(ang) if c < h else math.cos(ang))
                elif variant == "abs.sinusoidal":
                    half = d // 2
                    if p["layout"] == "interleaved":
                        tt, use_sin = c // 2, c % 2 == 0
                    else:
                        tt, use_sin = c % half, c < half
                    ang = q * p["base"] ** (-2.0 * tt / d)
                    y[b, n, c] = xv + (math.sin(ang) if use_sin else math.cos(ang))
                elif variant in ("abs.recurrent", "abs.floater"):
                    y[b, n, c] = xv + out["pos"][n, c]
                elif variant == "abs.conv":
                    k = p["kernel"]
                    acc = xv + t["bias"][c]
                    for tap in range(k):
                        src = n + tap - (k - 1) // 2
                        if 0 <= src < N:
                            acc += t["w"][c, tap] * x[b, src, c]
                    y[b, n, c] = acc
                else:
                    raise KeyError(variant)
    return out


def loop_inv_freq(p, seq_len, t):
    """th'_t: ref.rope_inv_freq for the formula scalings; LongRoPE's division written out here."""
    if p["scaling"] != "longrope":
        return ref.rope_inv_freq(p, seq_len)[0]
    R = p["rotary_dim"]
    ext = t["long_factor"] if seq_len > p["orig_max_pos"] else t["short_factor"]
    return [p["base"] ** (-2.0 * tt / R) / ext[tt] for tt in range(R // 2)]


def loop_component(p, tt):
    """M-RoPE: the pos_ids row pair tt reads, from the spec's words."""
    s0, s1, s2 = (int(v) for v in p["mrope_section"].split(":"))
    if p["mrope_layout"] == "chunked":
        return 0 if tt < s0 else 1 if tt < s0 + s1 else 2
    if tt % 3 == 1 and tt < 3 * s1:
        return 1
    if tt % 3 == 2 and tt < 3 * s2:
        return 2
    return 0


def loop_rope_vec(vec, pos, p, seq_len, t=None, tensor="q"):
    """One D-vector rotated at one position (an int, or the (t, h, w) column under M-RoPE)."""
    R = p["rotary_dim"]
    inv = loop_inv_freq(p, seq_len, t or {})
    mrope = p.get("positions", "linear") == "mrope"
    sb = p.get("xpos_scale_base", 0)
    out = list(vec)
    for tt in range(R // 2):
        i1, i2 = (tt, tt + R // 2) if p["style"] == "neox" else (2 * tt, 2 * tt + 1)
        a = (pos[loop_component(p, tt)] if mrope else pos) * inv[tt]
        f = p["attention_factor"]
        if sb:  # xPos: zeta^((p - ceil(L/2)) / scale_base), k the inverse
            zeta = (2 * tt + 0.4 * R) / (1.4 * R)
            e = (pos - math.ceil(seq_len / 2)) / sb
            f *= zeta ** (e if tensor == "q" else -e)
        out[i1] = (vec[i1] * math.cos(a) - vec[i2] * math.sin(a)) * f
        out[i2] = (vec[i2] * math.cos(a) + vec[i1] * math.sin(a)) * f
    return np.array(out)


def loop_rope_pos(p, t, col):
    """Position of column col: pos_ids' column under M-RoPE, else col itself."""
    return tuple(int(t["pos_ids"][c, col]) for c in range(3)) if p.get("positions") == "mrope" else col


def loop_rope_apply(t, p):
    x = t["x"]
    y = np.zeros_like(x)
    B, H, N, _ = x.shape
    for b in range(B):
        for h in range(H):
            for n in range(N):
                pos = tuple(int(t["pos_ids"][c, n]) for c in range(3)) if p.get("positions") == "mrope" \
                    else p["offset"] + n
                y[b, h, n] = loop_rope_vec(x[b, h, n], pos, p, p["offset"] + N, t, p.get("tensor", "q"))
    return {"y": y}


def loop_attention(variant, t, p, tile=3):
    """Per query: the spec's flash recurrence over key tiles of `tile` keys."""
    q, k, v = t["q"], t["k"], t["v"]
    B, H, N, D = q.shape
    Hkv, M = k.shape[1], k.shape[2]
    scale = p["scale"]
    slopes = ref.alibi_slopes(H) if variant == "attn.alibi" else None
    o = np.zeros_like(q)
    oi = np.zeros_like(q)
    for b in range(B):
        for h in range(H):
            kh = h // (H // Hkv)
            for i in range(N):
                ip = i + M - N
                qv = q[b, h, i]
                if variant == "attn.rope":
                    qv = loop_rope_vec(qv, loop_rope_pos(p, t, ip), p, M, t, "q")
                if variant == "attn.cope":
                    # Key by key from the row's last visible key down: the running sum of gates is
                    # p's suffix sum; e interpolates q.pos_emb[f], q.pos_emb[f + 1] (clamped).
                    cope_e, gsum, npos = {}, 0.0, t["pos_emb"].shape[0]
                    for j in range(ip if p["causal"] else M - 1, -1, -1):
                        gsum += 1.0 / (1.0 + math.exp(-scale * float(qv @ k[b, kh, j])))
                        pj = min(gsum, npos - 1)
                        f = int(math.floor(pj))
                        lo = float(qv @ t["pos_emb"][f])
                        hi = float(qv @ t["pos_emb"][min(f + 1, npos - 1)])
                        cope_e[j] = lo + (pj - f) * (hi - lo)
                m_run, l_run = -math.inf, 0.0
                acc, acc_i = np.zeros(D), np.zeros(D)
                for start in range(0, M, tile):
                    scores, vals, vals_i = [], [], []
                    for j in range(start, min(start + tile, M)):
                        if p["causal"] and j > ip:
                            continue
                        kv, vv = k[b, kh, j], v[b, kh, j]
                        extra_v = np.zeros(D)
                        if variant == "attn.rope":
                            s = scale * float(qv @ loop_rope_vec(kv, loop_rope_pos(p, t, j), p, M, t, "k"))
                        elif variant == "attn.complex":
                            qi, ki = t["qi"][b, h, i], t["ki"][b, kh, j]
                            re = float(qv @ kv - qi @ ki)
                            im = float(qv @ ki + qi @ kv)
                            s = math.hypot(re, im) * scale
                        elif variant == "attn.xl":
                            rk = t["rk"][h, (ip - j) + N - 1]
                            s = scale * float((qv + t["u"][h]) @ kv + (qv + t["vb"][h]) @ rk)
                        elif variant == "attn.shaw":
                            idx = min(max(j - ip, -p["max_rel"]), p["max_rel"]) + p["max_rel"]
                            s = scale * float(qv @ kv + qv @ t["rel_k"][idx])
                            extra_v = t["rel_v"][idx]
                        elif variant == "attn.deberta":
                            S = p["position_buckets"]
                            idx = min(max(ref.deberta_bucket(ip - j, S, p["max_relative_positions"]) + S, 0), 2 * S - 1)
                            s = scale * float(qv @ kv + qv @ t["kr"][h, idx] + kv @ t["qr"][h, idx])
                        else:
                            s = scale * float(qv @ kv)
                            if variant == "attn.alibi":
                                s -= slopes[h] * ((ip - j) if p["causal"] else abs(ip - j))
                            if variant == "attn.tupe":
                                s += scale * float(t["pq"][h, ip] @ t["pk"][h, j])
                            if variant == "attn.cope":
                                s += cope_e[j] * (1.0 if p["cope_nodiv"] else scale)
                            if variant in ("attn.t5", "attn.tupe"):
                                bk = ref.t5_bucket(j - ip, p["bidirectional"], p["num_buckets"], p["max_distance"])
                                s += t["bias_table"][bk, h]
                        scores.append(s)
                        vals.append(vv + extra_v)
                        vals_i.append(t["vi"][b, kh, j] if variant == "attn.complex" else np.zeros(D))
                    if not scores:
                        continue
                    m_new = max(m_run, max(scores))
                    corr = math.exp(m_run - m_new) if m_run != -math.inf else 0.0
                    l_run = corr * l_run + sum(math.exp(s - m_new) for s in scores)
                    acc = corr * acc + sum(math.exp(s - m_new) * vv for s, vv in zip(scores, vals))
                    acc_i = corr * acc_i + sum(math.exp(s - m_new) * vv for s, vv in zip(scores, vals_i))
                    m_run = m_new
                if l_run > 0:
                    o[b, h, i] = acc / l_run
                    oi[b, h, i] = acc_i / l_run
    return {"o": o, "oi": oi} if variant == "attn.complex" else {"o": o}


def loop_reference(variant, t, p):
    if variant.startswith("abs."):
        return loop_abs(variant, t, p)
    if variant == "rope.apply":
        return loop_rope_apply(t, p)
    return loop_attention(variant, t, p)


# ---------------------------------------------------------------------------
# Synthetic cases: contract params and inputs for every variant.
# ---------------------------------------------------------------------------

ROPE = {"rotary_dim": 6, "style": "gptj", "base": 10000.0, "scaling": "yarn", "factor": 4.0, "max_pos": 4,
        "orig_max_pos": 64, "beta_fast": 32.0, "beta_slow": 1.0, "low_freq_factor": 1.0,
        "high_freq_factor": 4.0, "attention_factor": 0.1 * math.log(4.0) + 1, "mscale": 0.0,
        "mscale_all_dim": 0.0, "truncate": True, "positions": "linear", "mrope_section": "1:1:1",
        "mrope_layout": "chunked", "xpos_scale_base": 0.0}
G40 = 0.1 * math.log(40.0)  # g(40, m) = m * G40 + 1
# issue 43's forms on rope.apply's small shapes (R = 8: corr(32) = 1.31, corr(1) = 2.81 at L0 4096).
ROPE_FORMS = [
    dict(ROPE, rotary_dim=8, scaling="yarn", factor=40.0, orig_max_pos=4096, mscale=0.707, mscale_all_dim=1.0,
         truncate=False, attention_factor=(0.707 * G40 + 1) / (G40 + 1)),
    dict(ROPE, rotary_dim=8, scaling="yarn", factor=40.0, orig_max_pos=4096, mscale=1.0, mscale_all_dim=0.0,
         attention_factor=G40 + 1),
    dict(ROPE, rotary_dim=8, scaling="longrope", factor=32.0, orig_max_pos=7,  # L = 8 > L0: long_factor
         attention_factor=math.sqrt(1 + math.log(32) / math.log(7))),
    dict(ROPE, rotary_dim=8, scaling="longrope", factor=32.0, orig_max_pos=8,  # L = L0: short_factor
         attention_factor=math.sqrt(1 + math.log(32) / math.log(8))),
    dict(ROPE, rotary_dim=8, style="neox", scaling="none", attention_factor=1.0, positions="mrope",
         mrope_section="2:1:1"),
    dict(ROPE, rotary_dim=8, scaling="ntk", attention_factor=1.0, positions="mrope", mrope_layout="interleaved",
         mrope_section="2:1:1"),
    dict(ROPE, scaling="none", attention_factor=1.0, xpos_scale_base=4.0),
    dict(ROPE, style="neox", scaling="none", attention_factor=1.0, xpos_scale_base=4.0, rotary_dim=4),
]


def attn_form(f):
    """A ROPE_FORMS entry on attn.rope's shapes (D = 6, M = 12): R <= 6, section 1:1:1, and
    LongRoPE's L0 moved by 4 so that L = M = 12 again meets L0 = 11 (long) and 12 (short)."""
    f = dict(f, rotary_dim=min(f["rotary_dim"], 6), mrope_section="1:1:1")
    if f["scaling"] == "longrope":
        f["orig_max_pos"] += 4
        f["attention_factor"] = math.sqrt(1 + math.log(f["factor"]) / math.log(f["orig_max_pos"]))
    return f


def synthetic_cases():
    """(variant, params without dtype) covering every variant of encodings.md."""
    a = {"batch": 2, "seq": 6, "d_model": 8, "offset": 3, "impl": "default"}
    at = {"batch": 2, "heads": 4, "kv_heads": 2, "seq": 3, "kv_seq": 12, "dim": 6, "scale": 0.5}
    cases = [
        ("abs.learned", dict(a, table_len=11)),
        ("abs.sinusoidal", dict(a, base=10000.0, layout="interleaved", padding_idx=1)),
        ("abs.sinusoidal", dict(a, base=500.0, layout="concat", padding_idx=3)),  # padding_idx unread
        ("abs.sinusoidal", dict(a, base=10000.0, layout="fairseq", padding_idx=1)),
        ("abs.sinusoidal", dict(a, d_model=7, base=100.0, layout="fairseq", padding_idx=-1)),
        ("abs.multiplicative", dict(a, table_len=9)),
        ("abs.hierarchical", dict(a, table_len=4, alpha=0.4)),
        ("abs.recurrent", dict(a, base=10000.0, impl="sequential")),
        ("abs.recurrent", dict(a, base=100.0, offset=200, impl="scan")),
        ("abs.floater", dict(a, substeps=5, dt=0.01, offset=0)),
        ("abs.complex_order", dict(a, vocab=7)),
        ("abs.conv", dict(a, kernel=3)),
        ("abs.conv", dict(a, kernel=7)),
        ("abs.conv_grouped", dict(a, kernel=4, groups=2)),
        ("abs.conv_grouped", dict(a, kernel=3, groups=4)),
        ("rope.apply", dict(ROPE, batch=1, heads=2, seq=5, dim=8, offset=3, impl="default", tensor="q")),
        ("rope.apply", dict(ROPE, batch=1, heads=2, seq=5, dim=8, offset=3, impl="default", tensor="q",
                            style="neox", scaling="llama3", factor=8.0, orig_max_pos=8192, attention_factor=1.0,
                            rotary_dim=8)),
        ("rope.apply", dict(ROPE, batch=1, heads=2, seq=5, dim=8, offset=3, impl="default", tensor="q",
                            style="neox", scaling="ntk", attention_factor=1.0)),
    ]
    for i, form in enumerate(ROPE_FORMS):
        # seq 12: Qwen2-VL's fill puts a 2 x 2 image at tokens 4..7, so pos_ids' rows differ.
        cases.append(("rope.apply", dict(form, batch=1, heads=2, seq=12, dim=8, offset=3, impl="default",
                                         tensor="qk"[i % 2])))
    for causal in (False, True):
        c = dict(at, causal=causal, impl="flash" if causal else "naive")
        cases += [
            ("attn.nope", c),
            ("attn.rope", dict(c, **dict(ROPE, scaling="ntk", attention_factor=1.0, rotary_dim=4))),
            *[("attn.rope", dict(c, **attn_form(f))) for f in ROPE_FORMS],
            ("attn.alibi", dict(c, heads=6, kv_heads=3)),
            ("attn.t5", dict(c, scale=1.0, num_buckets=32, max_distance=128, bidirectional=not causal)),
            ("attn.shaw", dict(c, max_rel=3)),
            ("attn.xl", c),
            ("attn.deberta", dict(c, scale=1 / math.sqrt(18), position_buckets=8, max_relative_positions=16)),
            ("attn.tupe", dict(c, scale=1 / math.sqrt(12), num_buckets=16, max_distance=20, bidirectional=not causal)),
            ("attn.complex", dict(c, scale=1 / math.sqrt(12))),
            # npos 4 against up to 12 keys: positions clamp and interpolate; both score forms.
            ("attn.cope", dict(c, npos=4, cope_nodiv=causal)),
            ("attn.cope", dict(c, npos=16, cope_nodiv=not causal)),
        ]
    return cases


def round_to(arr, dtype):
    return arr.astype(np.float32 if dtype == "f32" else np.float16)


def make_inputs(variant, p, rng):
    v = check_dumps.VARIANTS[variant]
    shapes = v.shapes(p)
    t = {}
    for n in v.input_names(p):
        if n == "pos_ids":  # the spec's fill (check_dumps insists on it)
            t[n] = ref.mrope_pos_ids(shapes[n][1]).astype(np.int32)
        elif n in ("short_factor", "long_factor"):  # the spec's fill: uniform in [1, s], f32
            t[n] = rng.uniform(1.0, p["factor"], size=shapes[n]).astype(np.float32)
        elif n in v.int_tensors:
            t[n] = rng.integers(0, p["vocab"], size=shapes[n]).astype(np.int32)
        else:
            scale = 0.3 if variant == "abs.floater" else 1.0  # keep the ODE tame
            t[n] = round_to(rng.standard_normal(shapes[n]) * scale, p["dtype"])
    return t


def write_dump(root, case_id, variant, p, inputs, outputs):
    folder = os.path.join(root, case_id)
    os.makedirs(folder)
    tensors = {}
    for role, group in (("inputs", inputs), ("outputs", outputs)):
        for n, arr in group.items():
            np.save(os.path.join(folder, n + ".npy"), arr)
            tensors[n] = {"dtype": {"float32": "f32", "float16": "f16", "int32": "i32"}[str(arr.dtype)],
                          "shape": list(arr.shape)}
    meta = {"id": case_id, "variant": variant, "impl": p["impl"], "dtype": p["dtype"], "params": p,
            "inputs": sorted(inputs), "outputs": sorted(outputs), "tensors": tensors}
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f)
    return folder


def f32_recurrence(P, d, base, scan, state_dtype=np.float32):
    """pos [P,d] as an f32 kernel would step it: sequentially, or as a log-depth
    product of squared rotations (the scan); state_dtype=float16 models a kernel
    that wrongly keeps its running state at f16 storage precision."""
    f = np.float32
    th = f(base) ** (-f(2) * np.arange(d // 2, dtype=f) / f(d))
    c, s = np.cos(th).astype(f), np.sin(th).astype(f)
    pos = np.zeros((P, d), dtype=f)
    if not scan:
        S, C = np.zeros(d // 2, f), np.ones(d // 2, f)
        for k in range(P):
            pos[k, 0::2], pos[k, 1::2] = S, C
            S, C = (S * c + C * s).astype(state_dtype).astype(f), (C * c - S * s).astype(state_dtype).astype(f)
        return pos
    for p in range(P):
        rc, rs, bc, bs, e = np.ones(d // 2, f), np.zeros(d // 2, f), c, s, p
        while e:
            if e & 1:
                rc, rs = (rc * bc - rs * bs).astype(f), (rs * bc + rc * bs).astype(f)
            bc, bs = (bc * bc - bs * bs).astype(f), (f(2) * bs * bc).astype(f)
            e >>= 1
        pos[p, 0::2], pos[p, 1::2] = rs, rc
    return pos


class CrossCheck(unittest.TestCase):
    def test_every_catalogue_variant_has_a_synthetic_case(self):
        # attn.kerple and attn.fire (issue 47) have no loop reference here yet:
        # their float64 known answers (test_spec_facts.py) and the dump check
        # (numpy_dumps) hold them to the spec meanwhile.
        no_loops_yet = {"attn.kerple", "attn.fire"}
        self.assertEqual({v for v, _ in synthetic_cases()}, set(check_dumps.VARIANTS) - no_loops_yet)

    def test_vectorised_reference_matches_the_loops(self):
        rng = np.random.default_rng(7)
        for variant, p in synthetic_cases():
            p = dict(p, dtype="f32")
            with self.subTest(variant=variant, params=p):
                t = {n: a.astype(np.int64 if a.dtype == np.int32 else np.float64)
                     for n, a in make_inputs(variant, p, rng).items()}
                fast = check_dumps.VARIANTS[variant].compute(t, p)
                slow = loop_reference(variant, t, p)
                self.assertEqual(set(fast), set(slow))
                for n in fast:
                    np.testing.assert_allclose(fast[n], slow[n], rtol=1e-10, atol=1e-10, err_msg=n)
                    self.assertGreater(float(np.sum(slow[n] ** 2)), 0.0, n)

    def test_recurrence_stepped_in_f64_matches_the_closed_form(self):
        t = {"x": np.zeros((1, 5, 8))}
        p = {"offset": 300, "base": 10000.0}
        np.testing.assert_allclose(loop_abs("abs.recurrent", t, p)["pos"], ref.abs_recurrent(t, p)["pos"],
                                   atol=1e-12)

    def test_recurrent_growth_bound_admits_f32_recurrences_and_rejects_f16_state(self):
        rng = np.random.default_rng(5)
        N, d = 2048, 16
        with tempfile.TemporaryDirectory() as root:
            cases = [("sequential", np.float32, "PASS"), ("scan", np.float32, "PASS"),
                     ("sequential", np.float16, "FAIL")]
            for dtype in ("f32", "f16"):
                for impl, state, expect in cases:
                    p = {"batch": 1, "seq": N, "d_model": d, "offset": 0, "base": 10000.0, "impl": impl,
                         "dtype": dtype}
                    x = round_to(rng.standard_normal((1, N, d)), dtype)
                    pos = f32_recurrence(N, d, 10000.0, impl == "scan", state)
                    y = round_to(x.astype(np.float32) + pos, dtype)
                    folder = write_dump(root, f"r-{impl}-{np.dtype(state).name}-{dtype}", "abs.recurrent", p,
                                        {"x": x}, {"y": y, "pos": round_to(pos, dtype)})
                    line, ok = check_dumps.check_case(folder)
                    self.assertEqual(ok, expect == "PASS", line)

    def test_checker_passes_faithful_and_fails_perturbed_synthetic_dumps(self):
        rng = np.random.default_rng(11)
        with tempfile.TemporaryDirectory() as good, tempfile.TemporaryDirectory() as bad:
            for i, (variant, p) in enumerate(synthetic_cases()):
                for dtype in ("f32", "f16"):
                    p = dict(p, dtype=dtype)
                    inputs = make_inputs(variant, p, rng)
                    t = {n: a.astype(np.int64 if a.dtype == np.int32 else np.float64) for n, a in inputs.items()}
                    outs = {n: round_to(a, dtype) for n, a in loop_reference(variant, t, p).items()}
                    case_id = f"s{i}-{variant}-{dtype}"
                    write_dump(good, case_id, variant, p, inputs, outs)
                    worse = {n: a.copy() for n, a in outs.items()}
                    name = sorted(worse)[0]
                    flat = worse[name].reshape(-1)
                    flat[flat.size // 2] += round_to(np.array(0.5 * np.max(np.abs(flat)) + 0.5), dtype)
                    write_dump(bad, case_id, variant, p, inputs, worse)
            buf = io.StringIO()
            with redirect_stdout(buf):
                rc = check_dumps.main(["check_dumps", good])
            self.assertEqual(rc, 0, buf.getvalue())
            self.assertEqual(buf.getvalue().count("PASS"), 2 * len(synthetic_cases()), buf.getvalue())
            buf = io.StringIO()
            with redirect_stdout(buf):
                rc = check_dumps.main(["check_dumps", bad])
            self.assertEqual(rc, 1)
            self.assertNotIn("PASS", buf.getvalue(), buf.getvalue())


if __name__ == "__main__":
    unittest.main(verbosity=1)
