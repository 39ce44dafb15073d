"""Float64 NumPy references for every variant of /work/shared/spec/encodings.md.

Written from the spec text alone (never from pebench's C++ references or
shaders), so that checking pebench's dumps against it is an independent check.
Every function takes float64 arrays and the case's `params` dict (keys of
encodings.md section 5 plus the shape keys) and returns float64 arrays.
"""
import math

import numpy as np

# ---------------------------------------------------------------------------
# Known-answer helpers (tested against the spec's facts in test_spec_facts.py)
# ---------------------------------------------------------------------------


def sinusoid(positions, d, base, layout, padding_idx=1):
    """pe(p) [len(positions), d] (encodings.md section 1, abs.sinusoidal).

    interleaved/concat: w_t = base^(-2t/d), d even. fairseq (tensor2tensor's
    form): h = floor(d/2) >= 2, w_t = base^(-t/(h-1)), row r = p + padding_idx + 1,
    pe[t] = sin(r w_t), pe[h+t] = cos(r w_t), a last column of 0 when d is odd.
    """
    positions = np.asarray(positions, dtype=np.float64)
    if layout == "fairseq":
        h = d // 2
        if h < 2:
            raise ValueError(f"d_model={d}: layout=fairseq needs floor(d/2) >= 2")
        w = base ** (-np.arange(h, dtype=np.float64) / (h - 1))
        ang = (positions + float(padding_idx) + 1.0)[:, None] * w[None, :]
        pe = np.zeros((len(positions), d))  # an odd d keeps its last column 0
        pe[:, :h] = np.sin(ang)
        pe[:, h : 2 * h] = np.cos(ang)
        return pe
    if d % 2:
        raise ValueError(f"d_model={d} must be even for a sinusoid")
    t = np.arange(d // 2, dtype=np.float64)
    w = base ** (-2.0 * t / d)
    ang = positions[:, None] * w[None, :]
    pe = np.empty((len(positions), d))
    if layout == "interleaved":
        pe[:, 0::2] = np.sin(ang)
        pe[:, 1::2] = np.cos(ang)
    elif layout == "concat":
        pe[:, : d // 2] = np.sin(ang)
        pe[:, d // 2 :] = np.cos(ang)
    else:
        raise ValueError(f"layout={layout!r} is not interleaved, concat or fairseq")
    return pe


def _largest_k(holds, k_max, guess):
    """Largest k in [0, k_max] with holds(k) true, holds monotone (true then false); -1 if none."""
    k = min(max(guess, 0), k_max)
    while k >= 0 and not holds(k):
        k -= 1
    while k < k_max and holds(k + 1):
        k += 1
    return k


def t5_bucket(rp, bidirectional, num_buckets=32, max_distance=128):
    """HF T5Attention._relative_position_bucket for one relative position rp = j - i'.

    The log branch `int(ln(n/exact) / ln(max_distance/exact) * (nb - exact))` is
    evaluated exactly: it is the largest k with
    (n/exact)^(nb-exact) >= (max_distance/exact)^k, i.e. in integers
    n^(nb-exact) * exact^k >= max_distance^k * exact^(nb-exact).
    (A float log one ulp low at n = 16, 32, 64 would give the wrong bucket.)
    """
    rp = int(rp)
    bucket = 0
    nb = int(num_buckets)
    if bidirectional:
        nb //= 2
        if rp > 0:
            bucket += nb
        n = abs(rp)
    else:
        n = max(-rp, 0)
    exact = nb // 2
    if n < exact:
        return bucket + n
    md = int(max_distance)
    if exact <= 0 or md <= exact:
        raise ValueError(f"max_distance={max_distance} must exceed num_buckets/4 (bidirectional) or /2")
    span = nb - exact
    lhs = n**span

    def holds(k):
        return lhs * exact**k >= md**k * exact**span

    guess = int(math.log(n / exact) / math.log(md / exact) * span)
    # Buckets past nb-1 are clipped, so k never needs to exceed span.
    k = _largest_k(holds, span, guess)
    return bucket + min(exact + k, nb - 1)


def t5_bucket_table(rps, bidirectional, num_buckets, max_distance):
    """Buckets for an integer array of relative positions (any shape)."""
    rps = np.asarray(rps, dtype=np.int64)
    lut = {int(r): t5_bucket(int(r), bidirectional, num_buckets, max_distance) for r in np.unique(rps)}
    return np.vectorize(lambda r: lut[int(r)], otypes=[np.int64])(rps)


def deberta_bucket(delta, position_buckets=256, max_relative_positions=512):
    """HF make_log_bucket_position(delta, S, P) for one integer delta = i' - j.

    log_pos = ceil(ln(a/mid) / ln((P-1)/mid) * (mid-1)) + mid is evaluated exactly:
    the ceiling is the smallest k with ((P-1)/mid)^k >= (a/mid)^(mid-1), i.e.
    (P-1)^k * mid^(mid-1) >= a^(mid-1) * mid^k.
    """
    delta = int(delta)
    mid = int(position_buckets) // 2
    a = mid - 1 if abs(delta) < mid else abs(delta)
    if a <= mid:
        return delta
    top = int(max_relative_positions) - 1
    if top <= mid:
        raise ValueError(f"max_relative_positions={max_relative_positions} must exceed position_buckets/2 + 1")
    e = mid - 1
    rhs_a = a**e

    def not_enough(k):  # k < the ceiling
        return top**k * mid**e < rhs_a * mid**k

    guess = math.ceil(math.log(a / mid) / math.log(top / mid) * e)
    k = max(guess, 0)
    while k > 0 and not not_enough(k - 1):
        k -= 1
    while not_enough(k):
        k += 1
    return int(math.copysign(k + mid, delta))


def deberta_index_table(deltas, position_buckets, max_relative_positions):
    """idx = clamp(bucket(delta) + S, 0, 2S-1) for an integer array of deltas."""
    deltas = np.asarray(deltas, dtype=np.int64)
    S = int(position_buckets)
    lut = {int(x): deberta_bucket(int(x), S, max_relative_positions) for x in np.unique(deltas)}
    b = np.vectorize(lambda x: lut[int(x)], otypes=[np.int64])(deltas)
    return np.clip(b + S, 0, 2 * S - 1)


def alibi_slopes(H):
    """get_slopes(H) of Press et al.: exact powers of two as the spec states them."""
    H = int(H)
    if H <= 0:
        raise ValueError(f"heads={H} must be positive")

    def power_of_two(n):
        return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]

    if H & (H - 1) == 0:
        return np.array(power_of_two(H))
    c = 1 << (H.bit_length() - 1)
    return np.array(power_of_two(c) + power_of_two(2 * c)[0::2][: H - c])


def yarn_mscale(s, m):
    """g(s, m) of encodings.md section 2 (HF get_mscale): 1 for s <= 1, else 0.1 m ln s + 1."""
    return 1.0 if s <= 1 else 0.1 * m * math.log(s) + 1.0


def yarn_attention_factor(s, mscale=0.0, mscale_all_dim=0.0):
    """YaRN's attention factor when none is given: g(s, mscale) / g(s, mscale_all_dim)
    if both are non-zero (DeepSeek-V2/V3), else g(s, 1)."""
    if mscale != 0 and mscale_all_dim != 0:
        return yarn_mscale(s, mscale) / yarn_mscale(s, mscale_all_dim)
    return yarn_mscale(s, 1.0)


def yarn_params(R, base, factor, orig_max_pos, beta_fast=32.0, beta_slow=1.0, truncate=True, mscale=0.0,
                mscale_all_dim=0.0):
    """(low, high, ramp[R/2], attention_factor) of YaRN as encodings.md section 2 defines them.

    truncate=true floors low and ceils high; truncate=false keeps them unrounded.
    Either way both are clamped to [0, R-1] -- the spec's words; HF clamps low
    from below and high from above only, which differs only when low > R-1 or
    high < 0 (L0 < 2 pi beta_slow), never in the suite's cases -- and equal
    bounds get high += 0.001.
    """

    def corr(r):
        return R * math.log(orig_max_pos / (2 * math.pi * r)) / (2 * math.log(base))

    low, high = corr(beta_fast), corr(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low = min(max(low, 0), R - 1)
    high = min(max(high, 0), R - 1)
    if low == high:
        high += 0.001
    t = np.arange(R // 2, dtype=np.float64)
    ramp = np.clip((t - low) / (high - low), 0.0, 1.0)
    return low, high, ramp, yarn_attention_factor(factor, mscale, mscale_all_dim)


def llama3_inv_freq(inv_freq, factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0, orig_max_pos=8192):
    """HF llama3 rope scaling of th_t (wavelen < L0/hff kept, > L0/lff divided, smooth between)."""
    inv_freq = np.asarray(inv_freq, dtype=np.float64)
    wavelen = 2 * math.pi / inv_freq
    low_wavelen = orig_max_pos / low_freq_factor
    high_wavelen = orig_max_pos / high_freq_factor
    smooth = (orig_max_pos / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed = (1 - smooth) * inv_freq / factor + smooth * inv_freq
    out = np.where(wavelen < high_wavelen, inv_freq, smoothed)
    return np.where(wavelen > low_wavelen, inv_freq / factor, out)


def longrope_attention_factor(s, orig_max_pos):
    """LongRoPE's attention factor when none is given: 1 for s <= 1, else sqrt(1 + ln s / ln L0)."""
    return 1.0 if s <= 1 else math.sqrt(1.0 + math.log(s) / math.log(orig_max_pos))


def longrope_uses_long(seq_len, orig_max_pos):
    """LongRoPE's branch: long_factor iff L > L0 (L = L0 takes short_factor)."""
    return seq_len > orig_max_pos


def rope_inv_freq(params, seq_len, factors=None):
    """th'_t [R/2] and the spec's default attention factor for params' scaling.

    seq_len is the L of the length-dependent scalings (dynamic NTK, LongRoPE):
    rope.apply's offset + N, attn.rope's M, also under M-RoPE. `factors` holds
    LongRoPE's `short_factor` and `long_factor` [R/2] (the dumped inputs).
    """
    R = int(params["rotary_dim"])
    base = float(params["base"])
    scaling = params["scaling"]
    s = float(params.get("factor", 1.0))
    af = 1.0
    t = np.arange(R // 2, dtype=np.float64)
    if scaling == "ntk":
        max_pos = float(params["max_pos"])
        if seq_len > max_pos:
            if R <= 2:
                raise ValueError(f"rotary_dim={R}: dynamic NTK needs R > 2")
            base = base * ((s * seq_len / max_pos) - (s - 1)) ** (R / (R - 2))
    th = base ** (-2.0 * t / R)
    if scaling in ("none", "ntk"):
        return th, af
    if scaling == "linear":
        return th / s, af
    if scaling == "yarn":
        _, _, ramp, af = yarn_params(R, base, s, float(params["orig_max_pos"]), float(params["beta_fast"]),
                                     float(params["beta_slow"]), bool(params.get("truncate", True)),
                                     float(params.get("mscale", 0.0)), float(params.get("mscale_all_dim", 0.0)))
        return th / s * ramp + th * (1 - ramp), af
    if scaling == "llama3":
        return llama3_inv_freq(th, s, float(params["low_freq_factor"]), float(params["high_freq_factor"]),
                               float(params["orig_max_pos"])), af
    if scaling == "longrope":
        L0 = float(params["orig_max_pos"])
        name = "long_factor" if longrope_uses_long(seq_len, L0) else "short_factor"
        if factors is None or name not in factors:
            raise ValueError(f"scaling=longrope needs the input {name}")
        ext = np.asarray(factors[name], dtype=np.float64).reshape(-1)
        if ext.shape != (R // 2,):
            raise ValueError(f"{name} has {ext.size} values, rotary_dim/2 = {R // 2}")
        return th / ext, longrope_attention_factor(s, L0)
    raise ValueError(f"scaling={scaling!r} is not one of none, linear, ntk, yarn, llama3, longrope")


def default_attention_factor(params, seq_len=0, factors=None):
    """The attention factor encodings.md gives when none is set (yarn, longrope; else 1)."""
    if params["scaling"] == "longrope":  # independent of L and of the factor lists
        return longrope_attention_factor(float(params["factor"]), float(params["orig_max_pos"]))
    return rope_inv_freq(params, seq_len, factors)[1]


# --- M-RoPE (Qwen2-VL / Qwen2.5-VL chunked, Qwen3-VL interleaved) -------------


def parse_mrope_section(text):
    """'s0:s1:s2' -> (s0, s1, s2), non-negative integers; ValueError otherwise."""
    parts = str(text).split(":")
    if len(parts) != 3 or not all(p.strip().isdigit() for p in parts):
        raise ValueError(f"mrope_section={text!r} is not s0:s1:s2 with non-negative integers")
    return tuple(int(p) for p in parts)


def default_mrope_section(R, layout):
    """chunked: R/8 : 3R/16 : 3R/16 rounded down, the remainder to s0; interleaved: R/2-2k : k : k, k = floor(5R/32)."""
    R = int(R)
    if layout == "chunked":
        s1 = s2 = (3 * R) // 16
    elif layout == "interleaved":
        s1 = s2 = (5 * R) // 32
    else:
        raise ValueError(f"mrope_layout={layout!r} is neither chunked nor interleaved")
    return (R // 2 - s1 - s2, s1, s2)


def mrope_section_problem(R, section, layout):
    """Why a section does not fit rotary_dim R and the layout, or None."""
    s0, s1, s2 = section
    if s0 + s1 + s2 != R // 2:
        return f"mrope_section {s0}:{s1}:{s2} must sum to rotary_dim/2 = {R // 2}"
    if layout == "interleaved" and not (3 * s1 - 2 < R // 2 and 3 * s2 - 1 < R // 2):
        return f"interleaved mrope_section {s0}:{s1}:{s2} needs 3 s1 - 2 < R/2 and 3 s2 - 1 < R/2 = {R // 2}"
    return None


def mrope_components(R, section, layout):
    """c(t) [R/2]: which row of pos_ids (0 t, 1 h, 2 w) frequency index t reads."""
    s0, s1, s2 = section
    problem = mrope_section_problem(R, section, layout)
    if problem:
        raise ValueError(problem)
    c = np.zeros(R // 2, dtype=np.int64)
    for t in range(R // 2):
        if layout == "chunked":
            c[t] = 0 if t < s0 else (1 if t < s0 + s1 else 2)
        elif t % 3 == 1 and t < 3 * s1:
            c[t] = 1
        elif t % 3 == 2 and t < 3 * s2:
            c[t] = 2
    return c


def mrope_pos_ids(cols):
    """pos_ids [3, cols] as the spec says the suite fills them (Qwen2-VL get_rope_index:
    text, one image of gh x gw patches, text). gh = gw = floor(sqrt(cols/2)),
    a = floor((cols - gh gw)/2); text n < a at (n, n, n); image token a + r gw + c
    at (a, a + r, a + c); text after the image from a + max(gh, gw) on."""
    cols = int(cols)
    gh = gw = math.isqrt(cols // 2)  # floor(sqrt(cols/2)) = floor(sqrt(floor(cols/2)))
    a = (cols - gh * gw) // 2
    ids = np.zeros((3, cols), dtype=np.int64)
    for n in range(cols):
        if n < a:
            ids[:, n] = n
        elif n < a + gh * gw:
            r, c = divmod(n - a, gw)
            ids[:, n] = (a, a + r, a + c)
        else:
            ids[:, n] = a + max(gh, gw) + (n - a - gh * gw)
    return ids


# --- xPos (Sun et al. 2022; torchscale xpos_relative_position.py) -------------


def xpos_zeta(R):
    """zeta_t = (2t + 0.4 R) / (1.4 R), t in [0, R/2)."""
    t = np.arange(int(R) // 2, dtype=np.float64)
    return (2.0 * t + 0.4 * R) / (1.4 * R)


def xpos_centre(L):
    """c = ceil(L / 2)."""
    return -(-int(L) // 2)


def xpos_factor(positions, R, L, scale_base, tensor):
    """[n, R/2]: zeta_t^((p - c)/scale_base) for q, its inverse for k."""
    if tensor not in ("q", "k"):
        raise ValueError(f"tensor={tensor!r} is neither q nor k")
    e = (np.asarray(positions, dtype=np.float64) - xpos_centre(L)) / float(scale_base)
    if tensor == "k":
        e = -e
    return xpos_zeta(R)[None, :] ** e[:, None]


def rope_rotate(x, positions, params, seq_len, factors=None, tensor="q"):
    """Rotate the last axis of x [..., n, D] (encodings.md section 2).

    positions: [n] (positions=linear) or pos_ids columns [3, n] (positions=mrope:
    pair t turns by pos[c(t), n] * th'_t). seq_len is L for NTK, LongRoPE and
    xPos's centre (rope.apply offset + N, attn.rope M). `factors`: LongRoPE's
    lists. `tensor` q or k picks xPos's factor or its inverse.
    """
    D = x.shape[-1]
    R = int(params["rotary_dim"])
    if R % 2 or R > D or R <= 0:
        raise ValueError(f"rotary_dim={R} must be even, positive and <= dim={D}")
    inv_freq, _ = rope_inv_freq(params, seq_len, factors)
    af = float(params["attention_factor"])  # the number actually used (dumped with the case; checked apart)
    pos = np.asarray(positions, dtype=np.float64)
    mrope = params.get("positions", "linear") == "mrope"
    if mrope:
        if pos.ndim != 2 or pos.shape[0] != 3:
            raise ValueError(f"positions=mrope needs pos_ids [3, n], got shape {pos.shape}")
        comp = mrope_components(R, parse_mrope_section(params["mrope_section"]),
                                params.get("mrope_layout", "chunked"))
        ang = pos[comp, :].T * inv_freq[None, :]  # [n, R/2]: row c(t) of pos_ids for pair t
    elif params.get("positions", "linear") == "linear":
        if pos.ndim != 1:
            raise ValueError(f"positions=linear needs [n] positions, got shape {pos.shape}")
        ang = pos[:, None] * inv_freq[None, :]
    else:
        raise ValueError(f"positions={params['positions']!r} is neither linear nor mrope")
    c, s = np.cos(ang), np.sin(ang)
    half = np.arange(R // 2)
    if params["style"] == "neox":
        i1, i2 = half, half + R // 2
    elif params["style"] == "gptj":
        i1, i2 = 2 * half, 2 * half + 1
    else:
        raise ValueError(f"style={params['style']!r} is neither neox nor gptj")
    scale = np.full(ang.shape, af)
    sb = float(params.get("xpos_scale_base", 0.0))
    # xPos: the spec multiplies the rotated pair by zeta_t^(+-(p - c)/scale_base) and says nothing of
    # attention_factor beside it (it is 1 under scaling=none unless given): read as both factors
    # applied. Its "canonical form" is gptj, but only other scalings and M-RoPE are refused, so
    # neox pairs (t, t + R/2) take zeta_t too.
    if sb != 0:
        if mrope or params["scaling"] != "none":
            raise ValueError("xPos takes scaling=none and positions=linear only")
        scale = scale * xpos_factor(pos, R, seq_len, sb, tensor)
    y = np.array(x, dtype=np.float64, copy=True)
    x1, x2 = x[..., i1], x[..., i2]
    y[..., i1] = (x1 * c - x2 * s) * scale
    y[..., i2] = (x2 * c + x1 * s) * scale
    return y


def gelu_exact(z):
    """0.5 z (1 + erf(z / sqrt 2)) with math.erf, element-wise."""
    erf = np.frompyfunc(math.erf, 1, 1)
    return 0.5 * z * (1.0 + erf(z / math.sqrt(2.0)).astype(np.float64))


# ---------------------------------------------------------------------------
# Section 1: input-side variants. x [B,N,d]; p = offset + n.
# ---------------------------------------------------------------------------


def _positions(params, N):
    return int(params.get("offset", 0)) + np.arange(N)


def abs_learned(t, params):
    p = _positions(params, t["x"].shape[1])
    return {"y": t["x"] + t["table"][p][None]}


def abs_sinusoidal(t, params):
    x = t["x"]
    pe = sinusoid(_positions(params, x.shape[1]), x.shape[2], float(params["base"]), params["layout"],
                  int(params.get("padding_idx", 1)))
    return {"y": x + pe[None]}


def abs_multiplicative(t, params):
    p = _positions(params, t["x"].shape[1])
    return {"y": t["x"] * t["table"][p][None]}


def abs_hierarchical(t, params):
    table, x = t["table"], t["x"]
    alpha = float(params["alpha"])
    n0 = table.shape[0]
    p = _positions(params, x.shape[1])
    u = (table - alpha * table[0]) / (1 - alpha)
    return {"y": x + alpha * u[p // n0][None] + (1 - alpha) * u[p % n0][None]}


def abs_recurrent(t, params):
    """Reference = the closed form sin(p th_t), cos(p th_t) in the interleaved layout."""
    x = t["x"]
    pos = sinusoid(_positions(params, x.shape[1]), x.shape[2], float(params["base"]), "interleaved")
    return {"y": x + pos[None], "pos": pos}


def abs_floater(t, params):
    """Classic RK4, `substeps` equal steps per interval dt, from P(0) = p0; pos[n] = P(t_n).

    t_n = n*dt as the spec's table says; a non-zero `offset` (section 0: token n
    sits at p = offset + n) is read as t_n = (offset + n)*dt.
    """
    x = t["x"]
    w1, b1, w2, b2 = t["w1"], t["b1"], t["w2"], t["b2"]
    N = x.shape[1]
    dt = float(params["dt"])
    sub = int(params["substeps"])
    offset = int(params.get("offset", 0))
    h_step = dt / sub

    def field(time, P):
        z = w1[:, :-1] @ P + w1[:, -1] * time + b1
        return w2[:, :-1] @ np.maximum(z, 0.0) + w2[:, -1] * time + b2

    P = np.array(t["p0"], dtype=np.float64)
    pos = np.empty((N, x.shape[2]))
    for k in range(offset + N):
        if k >= offset:
            pos[k - offset] = P
        for s in range(sub):
            tm = k * dt + s * h_step
            k1 = field(tm, P)
            k2 = field(tm + h_step / 2, P + h_step / 2 * k1)
            k3 = field(tm + h_step / 2, P + h_step / 2 * k2)
            k4 = field(tm + h_step, P + h_step * k3)
            P = P + h_step / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return {"y": x + pos[None], "pos": pos}


def abs_complex_order(t, params):
    tok = t["tokens"].astype(np.int64)
    p = _positions(params, tok.shape[1]).astype(np.float64)[None, :, None]
    amp, freq, phase = t["amp"][tok], t["freq"][tok], t["phase"][tok]
    arg = freq * p + phase
    return {"zr": amp * np.cos(arg), "zi": amp * np.sin(arg)}


def abs_conv(t, params):
    x, w, bias = t["x"], t["w"], t["bias"]
    k = w.shape[1]
    N = x.shape[1]
    half = (k - 1) // 2
    xp = np.pad(x, ((0, 0), (half, half), (0, 0)))
    y = x + bias[None, None, :]
    for tap in range(k):
        y = y + w[:, tap][None, None, :] * xp[:, tap : tap + N, :]
    return {"y": y}


def abs_conv_grouped(t, params):
    x, w, bias = t["x"], t["w"], t["bias"]
    B, N, d = x.shape
    G = int(params["groups"])
    K = w.shape[2]
    dg = d // G
    xp = np.pad(x, ((0, 0), (K // 2, K // 2), (0, 0))).reshape(B, N + 2 * (K // 2), G, dg)
    wg = w.reshape(G, dg, dg, K)  # [group, out-in-group, in-group, tap]
    conv = np.zeros((B, N, G, dg))
    for tap in range(K):  # output n reads x[n + tap - K/2]; the extra last output (K even) is never formed
        conv += np.einsum("bngc,goc->bngo", xp[:, tap : tap + N], wg[..., tap])
    conv = conv.reshape(B, N, d) + bias[None, None, :]
    return {"y": x + gelu_exact(conv)}


# ---------------------------------------------------------------------------
# Section 2: rotary.
# ---------------------------------------------------------------------------


def rope_factors(t):
    """LongRoPE's factor lists among a case's inputs (None when absent)."""
    f = {n: t[n] for n in ("short_factor", "long_factor") if n in t}
    return f or None


def rope_apply(t, params):
    """y = x rotated at p = offset + n, or at pos_ids[:, n] under M-RoPE; L = offset + N."""
    x = t["x"]
    N = x.shape[2]
    offset = int(params["offset"])
    pos = t["pos_ids"] if params.get("positions", "linear") == "mrope" else offset + np.arange(N)
    return {"y": rope_rotate(x, pos, params, seq_len=offset + N, factors=rope_factors(t),
                             tensor=params.get("tensor", "q"))}


# ---------------------------------------------------------------------------
# Section 3: attention. q [B,H,N,D], k/v [B,Hkv,M,D]; query i at i' = i + M - N.
# ---------------------------------------------------------------------------


def expand_kv(a, H):
    """[B,Hkv,M,D] -> [B,H,M,D]: query head h reads kv head h // (H/Hkv)."""
    Hkv = a.shape[1]
    if H % Hkv:
        raise ValueError(f"heads={H} is not divisible by kv_heads={Hkv}")
    return np.repeat(a, H // Hkv, axis=1)


def query_key_offsets(N, M):
    """(i' [N,1], j [1,M]) absolute positions."""
    return (np.arange(N) + (M - N))[:, None], np.arange(M)[None, :]


def softmax_attend(scores, causal, N, M):
    """p [B,H,N,M] = softmax over visible keys; rows with no visible key are all zero."""
    ip, j = query_key_offsets(N, M)
    visible = np.broadcast_to(j <= ip, (N, M)) if causal else np.ones((N, M), dtype=bool)
    s = np.where(visible, scores, -np.inf)
    mx = s.max(axis=-1, keepdims=True)
    mx = np.where(np.isfinite(mx), mx, 0.0)
    e = np.where(visible, np.exp(s - mx), 0.0)
    l = e.sum(axis=-1, keepdims=True)
    return np.divide(e, l, out=np.zeros_like(e), where=l > 0)


def _dims(t):
    q = t["q"]
    return q.shape[1], q.shape[2], t["k"].shape[2]  # H, N, M


def _plain(t, params, q, k, bias=None):
    H, N, M = _dims(t)
    s = float(params["scale"]) * np.einsum("bhnd,bhmd->bhnm", q, expand_kv(k, H))
    if bias is not None:
        s = s + bias
    p = softmax_attend(s, bool(params["causal"]), N, M)
    return {"o": np.einsum("bhnm,bhmd->bhnd", p, expand_kv(t["v"], H))}


def attn_nope(t, params):
    return _plain(t, params, t["q"], t["k"])


def attn_rope(t, params):
    """q rotated at i', k at j (M-RoPE: pos_ids columns i' and j), L = kv_seq; then plain attention."""
    _, N, M = _dims(t)
    ip, j = query_key_offsets(N, M)
    qpos, kpos = ip[:, 0], j[0]
    if params.get("positions", "linear") == "mrope":
        qpos, kpos = t["pos_ids"][:, qpos], t["pos_ids"][:, kpos]
    f = rope_factors(t)
    q = rope_rotate(t["q"], qpos, params, seq_len=M, factors=f, tensor="q")
    k = rope_rotate(t["k"], kpos, params, seq_len=M, factors=f, tensor="k")
    return _plain(t, params, q, k)


def attn_alibi(t, params):
    H, N, M = _dims(t)
    ip, j = query_key_offsets(N, M)
    dist = (ip - j) if params["causal"] else np.abs(ip - j)
    bias = -alibi_slopes(H)[None, :, None, None] * dist[None, None].astype(np.float64)
    return _plain(t, params, t["q"], t["k"], bias)


def kerple_bias(kind, r1, r2, d):
    """KERPLE (encodings.md section 3): log -r1 ln(1 + r2 d); power -r1 d^r2 with 0^r2 = 0.
    r1, r2 [H], d [N,M] (i' - j >= 0 where it matters); returns [H,N,M]."""
    r1 = np.asarray(r1, dtype=np.float64)[:, None, None]
    r2 = np.asarray(r2, dtype=np.float64)[:, None, None]
    d = np.maximum(np.asarray(d, dtype=np.float64), 0.0)[None]  # keys after the query are masked (causal only)
    if kind == "log":
        return -r1 * np.log1p(r2 * d)
    if kind != "power":
        raise ValueError(f"kind={kind!r} is neither log nor power")
    return np.where(d == 0, 0.0, -r1 * np.power(np.where(d == 0, 1.0, d), r2))


def attn_kerple(t, params):
    if not params["causal"]:
        raise ValueError("attn.kerple is causal only")
    _, N, M = _dims(t)
    ip, j = query_key_offsets(N, M)
    bias = kerple_bias(params.get("kind", "log"), t["r1"], t["r2"], ip - j)[None]
    return _plain(t, params, t["q"], t["k"], bias)


def fire_bias(t, params, N, M):
    """FIRE (encodings.md section 3): bias_h = w2[h].relu(w1 u + b1) + b2[h],
    u = ln(1 + c d) / (ln(1 + c max(i', L)) + eps), d = i' - j; returns [H,N,M]."""
    c, L, eps = float(params["fire_c"]), int(params["fire_L"]), float(params["eps"])
    ip, j = query_key_offsets(N, M)
    d = np.maximum(ip - j, 0).astype(np.float64)  # keys after the query are masked (causal only)
    u = np.log1p(c * d) / (np.log1p(c * np.maximum(ip, L).astype(np.float64)) + eps)  # [N,M]
    hidden = np.maximum(u[..., None] * t["w1"].astype(np.float64) + t["b1"].astype(np.float64), 0.0)  # [N,M,W]
    return np.einsum("nmw,hw->hnm", hidden, t["w2"].astype(np.float64)) + t["b2"].astype(np.float64)[:, None, None]


def attn_fire(t, params):
    if not params["causal"]:
        raise ValueError("attn.fire is causal only")
    _, N, M = _dims(t)
    return _plain(t, params, t["q"], t["k"], fire_bias(t, params, N, M)[None])


def cope_scores(t, params):
    """CoPE (encodings.md section 3): gates g = sigmoid(scale q.k) over visible keys,
    p_ij = min(sum_{t=j..last} g_it, npos - 1) (last = i' causal, M - 1 not),
    e_ij interpolates q.pos_emb between rows floor(p) and floor(p) + 1;
    s = scale q.k + e (cope_nodiv) or scale (q.k + e). Returns s [B,H,N,M]."""
    H, N, M = _dims(t)
    scale, causal = float(params["scale"]), bool(params["causal"])
    pos = t["pos_emb"].astype(np.float64)
    npos = pos.shape[0]
    q = t["q"].astype(np.float64)
    qk = np.einsum("bhnd,bhmd->bhnm", q, expand_kv(t["k"].astype(np.float64), H))
    g = 1.0 / (1.0 + np.exp(-scale * qk))
    if causal:
        ip, j = query_key_offsets(N, M)
        g = np.where((j <= ip)[None, None], g, 0.0)
    p = np.minimum(np.flip(np.cumsum(np.flip(g, axis=-1), axis=-1), axis=-1), npos - 1)
    f = np.floor(p).astype(np.int64)
    w = p - f
    qpos = np.einsum("bhnd,pd->bhnp", q, pos)  # [B,H,N,npos]
    lo = np.take_along_axis(qpos, f, axis=-1)
    hi = np.take_along_axis(qpos, np.minimum(f + 1, npos - 1), axis=-1)
    e = (1 - w) * lo + w * hi
    nodiv = params.get("cope_nodiv", True)
    nodiv = nodiv if isinstance(nodiv, bool) else str(nodiv).lower() in ("1", "true")
    return scale * qk + e if nodiv else scale * (qk + e)


def attn_cope(t, params):
    H, N, M = _dims(t)
    p = softmax_attend(cope_scores(t, params), bool(params["causal"]), N, M)
    return {"o": np.einsum("bhnm,bhmd->bhnd", p, expand_kv(t["v"].astype(np.float64), H))}


def _t5_bias(params, bias_table, N, M):
    ip, j = query_key_offsets(N, M)
    buckets = t5_bucket_table(j - ip, bool(params["bidirectional"]), int(params["num_buckets"]),
                              int(params["max_distance"]))
    return np.transpose(bias_table[buckets], (2, 0, 1))[None]  # [1,H,N,M]


def attn_t5(t, params):
    _, N, M = _dims(t)
    return _plain(t, params, t["q"], t["k"], _t5_bias(params, t["bias_table"], N, M))


def attn_shaw(t, params):
    H, N, M = _dims(t)
    K = int(params["max_rel"])
    ip, j = query_key_offsets(N, M)
    idx = np.clip(j - ip, -K, K) + K  # [N,M]
    q = t["q"]
    rk, rv = t["rel_k"][idx], t["rel_v"][idx]  # [N,M,D]
    s = float(params["scale"]) * (np.einsum("bhnd,bhmd->bhnm", q, expand_kv(t["k"], H))
                                  + np.einsum("bhnd,nmd->bhnm", q, rk))
    p = softmax_attend(s, bool(params["causal"]), N, M)
    o = np.einsum("bhnm,bhmd->bhnd", p, expand_kv(t["v"], H)) + np.einsum("bhnm,nmd->bhnd", p, rv)
    return {"o": o}


def attn_xl(t, params):
    H, N, M = _dims(t)
    ip, j = query_key_offsets(N, M)
    row = (ip - j) + N - 1  # [N,M]
    q, u, vb = t["q"], t["u"], t["vb"]
    rk = t["rk"][:, row]  # [H,N,M,D]
    content = np.einsum("bhnd,bhmd->bhnm", q + u[None, :, None, :], expand_kv(t["k"], H))
    position = np.einsum("bhnd,hnmd->bhnm", q + vb[None, :, None, :], rk)
    s = float(params["scale"]) * (content + position)
    p = softmax_attend(s, bool(params["causal"]), N, M)
    return {"o": np.einsum("bhnm,bhmd->bhnd", p, expand_kv(t["v"], H))}


def attn_deberta(t, params):
    H, N, M = _dims(t)
    ip, j = query_key_offsets(N, M)
    idx = deberta_index_table(ip - j, int(params["position_buckets"]), int(params["max_relative_positions"]))
    q, k = t["q"], expand_kv(t["k"], H)
    kr, qr = t["kr"][:, idx], t["qr"][:, idx]  # [H,N,M,D]
    s = (np.einsum("bhnd,bhmd->bhnm", q, k) + np.einsum("bhnd,hnmd->bhnm", q, kr)
         + np.einsum("bhmd,hnmd->bhnm", k, qr))
    p = softmax_attend(float(params["scale"]) * s, bool(params["causal"]), N, M)
    return {"o": np.einsum("bhnm,bhmd->bhnd", p, expand_kv(t["v"], H))}


def attn_tupe(t, params):
    H, N, M = _dims(t)
    ip, _ = query_key_offsets(N, M)
    pq = t["pq"][:, ip[:, 0]]  # [H,N,D]
    s = (np.einsum("bhnd,bhmd->bhnm", t["q"], expand_kv(t["k"], H))
         + np.einsum("hnd,hmd->hnm", pq, t["pk"])[None])
    s = float(params["scale"]) * s + _t5_bias(params, t["bias_table"], N, M)
    p = softmax_attend(s, bool(params["causal"]), N, M)
    return {"o": np.einsum("bhnm,bhmd->bhnd", p, expand_kv(t["v"], H))}


def attn_complex(t, params):
    H, N, M = _dims(t)
    q, qi = t["q"], t["qi"]
    k, ki = expand_kv(t["k"], H), expand_kv(t["ki"], H)
    re = np.einsum("bhnd,bhmd->bhnm", q, k) - np.einsum("bhnd,bhmd->bhnm", qi, ki)
    im = np.einsum("bhnd,bhmd->bhnm", q, ki) + np.einsum("bhnd,bhmd->bhnm", qi, k)
    s = np.sqrt(re * re + im * im) * float(params["scale"])
    p = softmax_attend(s, bool(params["causal"]), N, M)
    return {"o": np.einsum("bhnm,bhmd->bhnd", p, expand_kv(t["v"], H)),
            "oi": np.einsum("bhnm,bhmd->bhnd", p, expand_kv(t["vi"], H))}
