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


def sinusoid(positions, d, base, layout):
    """pe(p) [len(positions), d]: w_t = base^(-2t/d); interleaved or concat."""
    if d % 2:
        raise ValueError(f"d_model={d} must be even for a sinusoid")
    t = np.arange(d // 2, dtype=np.float64)
    w = base ** (-2.0 * t / d)
    ang = np.asarray(positions, dtype=np.float64)[:, None] * w[None, :]
    pe = np.empty((len(positions), d))
    if layout == "interleaved":
        pe[:, 0::2] = np.sin(ang)
        pe[:, 1::2] = np.cos(ang)
    elif layout == "concat":
        pe[:, : d // 2] = np.sin(ang)
        pe[:, d // 2 :] = np.cos(ang)
    else:
        raise ValueError(f"layout={layout!r} is neither interleaved nor concat")
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


def yarn_params(R, base, factor, orig_max_pos, beta_fast=32.0, beta_slow=1.0):
    """(low, high, ramp[R/2], attention_factor) of YaRN as encodings.md section 2 defines them."""

    def corr(r):
        return R * math.log(orig_max_pos / (2 * math.pi * r)) / (2 * math.log(base))

    low = max(math.floor(corr(beta_fast)), 0)
    high = min(math.ceil(corr(beta_slow)), R - 1)
    if low == high:
        high += 0.001
    t = np.arange(R // 2, dtype=np.float64)
    ramp = np.clip((t - low) / (high - low), 0.0, 1.0)
    return low, high, ramp, 0.1 * math.log(factor) + 1.0


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


def rope_inv_freq(params, seq_len):
    """th'_t [R/2] and the spec's attention factor for params' scaling; seq_len is NTK's L."""
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
                                     float(params["beta_slow"]))
        return th / s * ramp + th * (1 - ramp), af
    if scaling == "llama3":
        return llama3_inv_freq(th, s, float(params["low_freq_factor"]), float(params["high_freq_factor"]),
                               float(params["orig_max_pos"])), af
    raise ValueError(f"scaling={scaling!r} is not one of none, linear, ntk, yarn, llama3")


def rope_rotate(x, positions, params, seq_len):
    """Rotate the last axis of x [..., n, D] at `positions` [n] (encodings.md section 2)."""
    D = x.shape[-1]
    R = int(params["rotary_dim"])
    if R % 2 or R > D or R <= 0:
        raise ValueError(f"rotary_dim={R} must be even, positive and <= dim={D}")
    inv_freq, _ = rope_inv_freq(params, seq_len)
    af = float(params["attention_factor"])  # the number actually used (dumped with the case)
    ang = np.asarray(positions, dtype=np.float64)[:, None] * inv_freq[None, :]
    c, s = np.cos(ang), np.sin(ang)
    half = np.arange(R // 2)
    if params["style"] == "neox":
        i1, i2 = half, half + R // 2
    elif params["style"] == "gptj":
        i1, i2 = 2 * half, 2 * half + 1
    else:
        raise ValueError(f"style={params['style']!r} is neither neox nor gptj")
    y = np.array(x, dtype=np.float64, copy=True)
    x1, x2 = x[..., i1], x[..., i2]
    y[..., i1] = (x1 * c - x2 * s) * af
    y[..., i2] = (x2 * c + x1 * s) * af
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
    pe = sinusoid(_positions(params, x.shape[1]), x.shape[2], float(params["base"]), params["layout"])
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


def rope_apply(t, params):
    x = t["x"]
    N = x.shape[2]
    offset = int(params["offset"])
    return {"y": rope_rotate(x, offset + np.arange(N), params, seq_len=offset + N)}


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
    """q rotated at i', k at j, NTK's L = kv_seq; then plain attention."""
    _, N, M = _dims(t)
    ip, j = query_key_offsets(N, M)
    q = rope_rotate(t["q"], ip[:, 0], params, seq_len=M)
    k = rope_rotate(t["k"], j[0], params, seq_len=M)
    return _plain(t, params, q, k)


def attn_alibi(t, params):
    H, N, M = _dims(t)
    ip, j = query_key_offsets(N, M)
    dist = (ip - j) if params["causal"] else np.abs(ip - j)
    bias = -alibi_slopes(H)[None, :, None, None] * dist[None, None].astype(np.float64)
    return _plain(t, params, t["q"], t["k"], bias)


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
