#!/usr/bin/env python3
"""PyTorch's time for pebench's attention and RoPE cases, on the same GPU.

Usage: torch_peer.py PEBENCH_REPORT.json --out PEER.json [--device cuda|cuda:N|cpu]

For every distinct (variant, dtype, params) of the report's attn.nope,
attn.alibi, attn.t5 (impl aside) and rope.apply results, times the PyTorch
equivalent at that shape: attention through
torch.nn.functional.scaled_dot_product_attention (impl "torch-sdpa"), RoPE as
Hugging Face applies it, x*cos + rotate(x)*sin with cached cos/sin (impl
"torch"). Writes a pebench.report/1 report with the same case keys, so
`pebench compare PEBENCH_REPORT.json PEER.json` matches them (tools/peers/README.md).
Semantics: ../../shared/spec/encodings.md (sections 0, 2 and 3).

The parts that need no torch (bias building, RoPE caches, references, the
report writer) import with numpy alone; tests/peers_test.py checks them.
"""
import argparse
import datetime
import gc
import hashlib
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import time
import warnings

import numpy as np

SCHEMA = "pebench.report/1"
ATTN_VARIANTS = ("attn.nope", "attn.alibi", "attn.t5")
ROPE_VARIANT = "rope.apply"
PEER_IMPL = {"attn.nope": "torch-sdpa", "attn.alibi": "torch-sdpa", "attn.t5": "torch-sdpa", "rope.apply": "torch"}
# encodings.md section 0: the nmse ceilings (f32 1e-6, f16 1e-3).
NMSE_CEILING = {"f32": 1e-6, "f16": 1e-3}
WARMUP_CALLS = 3
SEED = 0

# Parameters the peer implements, and those it implements only at the value
# that turns them off (a case with any other value is skipped, not timed as
# something else).
ATTN_PARAMS = {"batch", "heads", "kv_heads", "seq", "kv_seq", "dim", "causal", "scale", "dtype", "impl"}
T5_PARAMS = {"num_buckets", "max_distance", "bidirectional"}
ATTN_OFF = {"window": 0, "chunk": 0, "sink_tokens": 0, "softcap": 0, "sink_logits": False}
ROPE_PARAMS = {"batch", "heads", "seq", "dim", "offset", "rotary_dim", "style", "base", "scaling",
               "attention_factor", "dtype", "impl"}
# Read only by scalings and position schemes other than the plain one.
ROPE_IGNORED_WITH_NONE = {"factor", "max_pos", "orig_max_pos", "beta_fast", "beta_slow", "low_freq_factor",
                          "high_freq_factor", "mscale", "mscale_all_dim", "truncate", "mrope_section",
                          "mrope_layout", "tensor"}
ROPE_OFF = {"positions": "linear", "xpos_scale_base": 0}


class BadInput(Exception):
    """Bad input: one line on stderr, exit 2."""


class Skip(Exception):
    """A case the peer does not implement: status skipped, with the reason."""


# --- the input report ------------------------------------------------------------


def load_pebench_report(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror or e}")
    except (ValueError, UnicodeDecodeError) as e:
        raise BadInput(f"{path}: not JSON: {e}")
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise BadInput(f"{path}: not a pebench report (schema {SCHEMA} expected)")
    if not isinstance(doc.get("results"), list):
        raise BadInput(f"{path}: \"results\" is missing or not a list")
    for i, r in enumerate(doc["results"]):
        if not isinstance(r, dict) or not isinstance(r.get("params"), dict):
            raise BadInput(f"{path}: results[{i}] is not a result with a params object")
        for key in ("variant", "impl", "dtype"):
            if not isinstance(r.get(key), str):
                raise BadInput(f"{path}: results[{i}].{key} is missing or not a string")
    return doc


def canonical(value):
    """A parameter value as pebench's case key writes it (4 equals 4.0)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        if math.isfinite(value) and float(value) == math.floor(value) and abs(value) < 2**53:
            return str(int(value))
        return repr(float(value))
    return json.dumps(value, sort_keys=True)


def case_key(variant, dtype, params):
    """pebench's case key with the impl left out: one peer case per key."""
    items = sorted((k, canonical(v)) for k, v in params.items() if k not in ("impl", "dtype"))
    return variant + "|" + dtype + "|" + ",".join(f"{k}={v}" for k, v in items)


def sample_count(result):
    t = result.get("time_ns")
    samples = t.get("samples") if isinstance(t, dict) else None
    return len(samples) if isinstance(samples, list) else 0


def peer_cases(report):
    """The report's cases the peer times, one per (variant, dtype, params)
    whatever the impl, in report order. Samples: the most any impl of the
    case took (at least 1); bytes and flops: the flash impl's, else the first."""
    cases, by_key = [], {}
    for r in report["results"]:
        if r["variant"] not in PEER_IMPL:
            continue
        key = case_key(r["variant"], r["dtype"], r["params"])
        if key not in by_key:
            by_key[key] = {"key": key, "variant": r["variant"], "dtype": r["dtype"], "params": dict(r["params"]),
                           "label": r.get("label", ""), "samples": 0, "sources": []}
            cases.append(by_key[key])
        case = by_key[key]
        case["sources"].append(r)
        case["samples"] = max(case["samples"], sample_count(r), 1)
    for case in cases:
        flash = [r for r in case["sources"] if r["impl"] == "flash"]
        cost = (flash or case["sources"])[0]
        case["bytes"] = cost.get("bytes", 0) or 0
        case["flops"] = cost.get("flops", 0) or 0
    return cases


# --- parameters ------------------------------------------------------------------


def check_known(params, known, off):
    for k, v in params.items():
        if k in known:
            continue
        if k in off and canonical(v) == canonical(off[k]):
            continue
        if k in off:
            raise Skip(f"{k}={canonical(v)} is not implemented by the torch peer")
        raise Skip(f"parameter {k} is not implemented by the torch peer")


def attention_shape(variant, params):
    """B, H, Hkv, N, M, D, causal, scale of an attention case (encodings.md
    section 3); Skip for parameters the peer does not implement."""
    known = ATTN_PARAMS | (T5_PARAMS if variant == "attn.t5" else set())
    check_known(params, known, ATTN_OFF)
    B, H, N, D = (int(params.get(k, d)) for k, d in (("batch", 1), ("heads", 8), ("seq", 128), ("dim", 64)))
    Hkv = int(params.get("kv_heads", H))
    M = int(params.get("kv_seq", N))
    causal = bool(params.get("causal", False))
    default_scale = 1.0 if variant == "attn.t5" else 1.0 / math.sqrt(D)
    scale = float(params.get("scale", default_scale))
    if min(B, H, Hkv, N, M, D) < 1 or H % Hkv != 0 or M < N:
        raise Skip(f"shape B={B} H={H} Hkv={Hkv} N={N} M={M} D={D} is not valid (H % Hkv == 0, M >= N)")
    return B, H, Hkv, N, M, D, causal, scale


def t5_params(params):
    causal = bool(params.get("causal", False))
    nb = int(params.get("num_buckets", 32))
    md = int(params.get("max_distance", 128))
    bidirectional = bool(params.get("bidirectional", not causal))
    half = nb // 2 if bidirectional else nb
    if nb < 2 or nb % 2 or half // 2 < 1 or md <= half // 2:
        raise Skip(f"num_buckets={nb} max_distance={md} bidirectional={bidirectional} is not a valid T5 bucketing")
    return bidirectional, nb, md


def rope_params(params):
    """B, H, N, D, offset, R, style, base, attention_factor of a rope.apply
    case (encodings.md section 2); Skip for anything but the plain rotation."""
    check_known(params, ROPE_PARAMS | ROPE_IGNORED_WITH_NONE, ROPE_OFF)
    if params.get("scaling", "none") != "none":
        raise Skip(f"scaling={params['scaling']} is not implemented by the torch peer (only none)")
    B, H, N, D = (int(params.get(k, d)) for k, d in (("batch", 1), ("heads", 8), ("seq", 128), ("dim", 64)))
    offset = int(params.get("offset", 0))
    R = int(params.get("rotary_dim", D))
    style = params.get("style", "neox")
    base = float(params.get("base", 10000.0))
    factor = float(params.get("attention_factor", 1.0))
    if style not in ("neox", "gptj"):
        raise Skip(f"style={style} is not implemented by the torch peer")
    if min(B, H, N, D, R) < 1 or R % 2 or R > D or offset < 0:
        raise Skip(f"rotary_dim={R} must be even and <= dim={D}")
    return B, H, N, D, offset, R, style, base, factor


# --- attention biases (numpy; encodings.md sections 0 and 3) --------------------


def alibi_slopes(heads):
    """get_slopes(H) of Press et al.: 2^(-8(h+1)/H) for H a power of two,
    else the slopes of the power of two below, then every other slope of twice it."""

    def power_of_two(n):
        return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]

    c = 2 ** int(math.floor(math.log2(heads)))
    slopes = power_of_two(c)
    if c < heads:
        slopes += power_of_two(2 * c)[0::2][: heads - c]
    return np.array(slopes, dtype=np.float64)


def t5_thresholds(bidirectional, num_buckets, max_distance):
    """The first distance n of each log bucket after the first one, exactly:
    bucket(n) >= exact + t  <=>  (n/exact)^L >= (max_distance/exact)^t, in
    integers (a float log is one ulp low at n = 16, 32, 64)."""
    half = num_buckets // 2 if bidirectional else num_buckets
    exact = half // 2
    L = half - exact
    firsts = []
    for t in range(1, L):
        target = max_distance**t * exact**L
        n = max(exact + 1, math.ceil(exact * (max_distance / exact) ** (t / L)))
        while n > exact + 1 and (n - 1) ** L * exact**t >= target:
            n -= 1
        while n**L * exact**t < target:
            n += 1
        firsts.append(n)
    return firsts


def t5_buckets(rp, bidirectional, num_buckets, max_distance):
    """HF T5Attention._relative_position_bucket of rp = j - i' (any int array)."""
    rp = np.asarray(rp, dtype=np.int64)
    half = num_buckets // 2 if bidirectional else num_buckets
    exact = half // 2
    if bidirectional:
        bucket = np.where(rp > 0, half, 0)
        n = np.abs(rp)
    else:
        bucket = np.zeros_like(rp)
        n = np.maximum(-rp, 0)
    firsts = np.array(t5_thresholds(bidirectional, num_buckets, max_distance), dtype=np.int64)
    log_bucket = exact + np.searchsorted(firsts, n, side="right")
    return bucket + np.where(n < exact, n, log_bucket)


def distances(N, M):
    """rp = j - i' for every row of the [N, M] score matrix (bottom-right:
    query i sits at i' = i + M - N)."""
    return np.arange(M)[None, :] - (np.arange(N)[:, None] + (M - N))


def causal_visible(N, M):
    """Key j is visible to query i iff j <= i' (bottom-right aligned)."""
    return distances(N, M) <= 0


def bias_by_distance(variant, params, heads, N, M, bias_table=None):
    """The additive bias as a function of rp = j - i', for rp from -(M-1) to
    N-1: [H, N+M-1] float64, -inf where causal hides the key; None for
    attn.nope without causal. expand_bias makes [H, N, M] of it."""
    causal = bool(params.get("causal", False))
    rp = np.arange(-(M - 1), N)
    if variant == "attn.nope":
        if not causal:
            return None
        bias = np.zeros((heads, rp.size))
    elif variant == "attn.alibi":
        slopes = alibi_slopes(heads)[:, None]
        # causal: -m (i' - j) = m rp; otherwise -m |i' - j|.
        bias = slopes * rp[None, :] if causal else -slopes * np.abs(rp)[None, :]
    elif variant == "attn.t5":
        bidirectional, nb, md = t5_params(params)
        table = np.asarray(bias_table, dtype=np.float64)  # [nb, H]
        bias = table[t5_buckets(rp, bidirectional, nb, md)].T
    else:
        raise ValueError(f"no bias for {variant}")
    if causal:
        bias = np.where(rp[None, :] > 0, -np.inf, bias)
    return np.ascontiguousarray(bias, dtype=np.float64)


def expand_bias(by_distance, N, M):
    """[H, N+M-1] by rp to [H, N, M]: entry (i, j) reads rp = j - i'."""
    return by_distance[:, distances(N, M) + (M - 1)]


def t5_bias_table(num_buckets, heads, dtype):
    """The learned table; its values do not change the cost. Rounded to the
    storage dtype so that the reference sees exactly what the GPU adds."""
    rng = np.random.default_rng(SEED)
    table = rng.uniform(-1.0, 1.0, size=(num_buckets, heads))
    return table.astype(np.float16 if dtype == "f16" else np.float32).astype(np.float64)


# --- RoPE (numpy; encodings.md section 2) ---------------------------------------


def rope_frequencies(R, base):
    """th_t = base^(-2t/R), t in [0, R/2)."""
    return base ** (-2.0 * np.arange(R // 2) / R)


def rope_cache(N, offset, R, style, base, attention_factor=1.0):
    """HF's cos/sin caches [N, R] for positions offset..offset+N-1, in float64:
    neox repeats the R/2 angles as two halves, gptj interleaves them."""
    angles = np.outer(np.arange(offset, offset + N, dtype=np.float64), rope_frequencies(R, base))
    emb = np.concatenate([angles, angles], axis=-1) if style == "neox" else np.repeat(angles, 2, axis=-1)
    return np.cos(emb) * attention_factor, np.sin(emb) * attention_factor


def rotate_half(x):
    """neox: (x1, x2) -> (-x2, x1) on the two halves."""
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def rotate_every_two(x):
    """gptj: (x_2t, x_2t+1) -> (-x_2t+1, x_2t)."""
    out = np.empty_like(x)
    out[..., 0::2] = -x[..., 1::2]
    out[..., 1::2] = x[..., 0::2]
    return out


def rope_apply_hf(x, cos, sin, style):
    """y = x*cos + rotate(x)*sin on the first R dims, the rest unchanged (what
    the timed torch code does, here in numpy)."""
    R = cos.shape[-1]
    rot = rotate_half if style == "neox" else rotate_every_two
    y = x[..., :R] * cos + rot(x[..., :R]) * sin
    return np.concatenate([y, x[..., R:]], axis=-1)


def rope_reference(x, positions, R, style, base, attention_factor=1.0):
    """encodings.md's pair rotation in float64: x [..., n, D] at positions[n]."""
    y = np.array(x, dtype=np.float64)
    th = rope_frequencies(R, base)
    a = np.asarray(positions, dtype=np.float64)[:, None] * th[None, :]
    t = np.arange(R // 2)
    i1, i2 = (t, t + R // 2) if style == "neox" else (2 * t, 2 * t + 1)
    x1, x2 = y[..., i1].copy(), y[..., i2].copy()
    y[..., i1] = (x1 * np.cos(a) - x2 * np.sin(a)) * attention_factor
    y[..., i2] = (x2 * np.cos(a) + x1 * np.sin(a)) * attention_factor
    return y


# --- validation (numpy, float64) --------------------------------------------------


def attention_reference_row(q_row, k, v, scale, bias_row):
    """o_i = softmax(scale q.k + bias) v over visible keys (bias -inf hides)."""
    s = scale * (k @ q_row) + bias_row
    visible = np.isfinite(s)
    if not visible.any():
        return np.zeros(v.shape[-1])
    p = np.exp(s - s[visible].max())
    return (p / p.sum()) @ v


def check_rows(n):
    """Four evenly spread rows (fewer when n < 4)."""
    return sorted({0, n // 3, (2 * n) // 3, n - 1})


def validation_record(out, ref, dtype, rows_checked, rows_total):
    """pebench's validation object: nmse, max_abs, max_rel (max |out-ref| / max |ref|)."""
    out = np.asarray(out, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    err = out - ref
    denom = float(np.sum(ref * ref))
    nmse = float(np.sum(err * err)) / denom if denom > 0 else float(np.sum(err * err))
    max_abs = float(np.max(np.abs(err))) if err.size else 0.0
    max_ref = float(np.max(np.abs(ref))) if ref.size else 0.0
    max_rel = max_abs / max_ref if max_ref > 0 else max_abs
    tol = NMSE_CEILING[dtype]
    passed = bool(np.all(np.isfinite(out)) and math.isfinite(nmse) and nmse <= tol)
    return {"nmse": finite_or_none(nmse), "max_abs": finite_or_none(max_abs), "max_rel": finite_or_none(max_rel),
            "tolerance": {"nmse": tol, "model": f"encodings.md section 0 ceiling for {dtype}"},
            "passed": passed, "rows_checked": rows_checked, "rows_total": rows_total,
            "detail": "float64 numpy reference from the same stored inputs"}


# --- the report ---------------------------------------------------------------------


def finite_or_none(x):
    return x if x is not None and math.isfinite(x) else None


def time_stats(samples_ns, started_ns=None):
    """pebench's time_ns object (stddev with n - 1, 0 for one sample)."""
    s = [float(x) for x in samples_ns]
    t = {"median": statistics.median(s), "min": min(s), "max": max(s), "mean": statistics.fmean(s),
         "stddev": statistics.stdev(s) if len(s) > 1 else 0.0, "samples": s}
    if started_ns is not None:
        t["started_ns"] = [max(0.0, float(x)) for x in started_ns]
    return t


def case_id(variant, impl, dtype, key):
    return f"d0-{variant}-{impl}-{dtype}-{hashlib.sha1(key.encode()).hexdigest()[:8]}"


def result_record(case, status, reason="", times=None, timing=None, validation=None, peer=None):
    """One result as pebench.report/1 has it, keyed as the pebench case:
    same variant, dtype and params (impl inside params renamed to the peer's)."""
    impl = PEER_IMPL[case["variant"]]
    params = dict(case["params"])
    params["impl"] = impl
    params["dtype"] = case["dtype"]
    median = times["median"] if times else None
    per_ns = (lambda x: x / median) if median and median > 0 else (lambda x: None)
    return {"id": case_id(case["variant"], impl, case["dtype"], case["key"]), "label": case.get("label", ""),
            "device": 0, "variant": case["variant"], "impl": impl, "dtype": case["dtype"], "params": params,
            "status": status, "reason": reason, "time_ns": times, "timing": timing,
            "bytes": case["bytes"], "flops": case["flops"],
            "gbps": per_ns(case["bytes"]) if case["bytes"] else None,
            "gflops": per_ns(case["flops"]) if case["flops"] else None,
            "validation": validation, "peer": peer or {}}


def host_info():
    """host as pebench writes it: os, cpu (model name), cpu_id, logical_cores."""
    fields = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, sep, value = line.partition(":")
                if sep:
                    fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    if fields.get("vendor_id"):
        cpu_id = f"{fields['vendor_id']} family {fields.get('cpu family', '')} model {fields.get('model', '')}"
    elif fields.get("CPU implementer"):
        cpu_id = f"implementer {fields['CPU implementer']} part {fields.get('CPU part', '')}"
    else:
        cpu_id = "unknown"
    os_name = f"{platform.system()} {platform.release()} {platform.machine()}"
    try:
        pretty = platform.freedesktop_os_release().get("PRETTY_NAME")
        os_name = f"{pretty} ({os_name})" if pretty else os_name
    except (OSError, AttributeError):
        pass
    return {"os": os_name, "cpu": fields.get("model name", platform.processor() or "unknown"), "cpu_id": cpu_id,
            "logical_cores": os.cpu_count() or 1}


def report_document(results, device, tool, command, source_path, source, run_extra=None):
    run = {"peer": "tools/peers/torch_peer.py", "peer_of": source_path, "peer_of_created": source.get("created"),
           "peer_of_tool": source.get("tool"), "seed": SEED, "warmup_calls": WARMUP_CALLS, "cases": len(results)}
    run.update(run_extra or {})
    return {"schema": SCHEMA, "tool": tool,
            "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": command, "host": host_info(), "run": run, "devices": [device], "results": results}


def write_report_atomic(path, doc):
    """The whole report or nothing: a temporary file in the same folder, then os.replace."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".torch_peer.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, allow_nan=False)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def check_output_path(out, inp):
    out_abs, in_abs = os.path.realpath(out), os.path.realpath(inp)
    if out_abs == in_abs or (os.path.exists(out) and os.path.samefile(out, inp)):
        raise BadInput(f"--out {out} is the input report {inp}: refusing to overwrite it")
    folder = os.path.dirname(out_abs)
    if not os.path.isdir(folder):
        raise BadInput(f"--out {out}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise BadInput(f"--out {out}: folder {folder} is not writable")


# --- torch: device, SDPA backend, timing -----------------------------------------


def import_torch():
    try:
        import torch  # here, not at the top: the numpy parts above need no torch
    except ImportError as e:
        raise BadInput(f"the torch peer needs PyTorch: {e}")
    return torch


def torch_dtype(torch, dtype):
    return {"f32": torch.float32, "f16": torch.float16}[dtype]


def nvidia_driver_version():
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as f:
            for word in f.readline().split():
                if word[:1].isdigit() and "." in word:
                    return word
    except OSError:
        pass
    return "unknown"


def dotted3(version):
    parts = [p for p in str(version or "").split(".") if p.isdigit()][:3]
    return ".".join((parts + ["0", "0", "0"])[:3])


def device_record(torch, device):
    """The device as the peer sees it, in pebench's devices[] shape. Fields
    that name Vulkan things (driver_id, api_version) get CUDA's nearest."""
    if device.type == "cpu":
        host = host_info()
        return {"index": 0, "name": host["cpu"], "vendor": "CPU", "vendor_id": 0, "device_id": 0,
                "device_type": "cpu", "driver_id": 0, "driver_name": "torch-cpu",
                "driver_info": f"torch {torch.__version__}, {torch.get_num_threads()} threads",
                "driver_version": torch.__version__, "api_version": dotted3(torch.__version__.split("+")[0]),
                "subgroup_size": 1, "timestamp_period_ns": 1.0,
                "limits": {}, "features": {"timestamps": False}}
    props = torch.cuda.get_device_properties(device)
    hip = getattr(torch.version, "hip", None)
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {"index": 0, "name": torch.cuda.get_device_name(device), "vendor": "AMD" if hip else "NVIDIA",
            "vendor_id": 0x1002 if hip else 0x10DE, "device_id": 0,
            "device_type": "integrated" if getattr(props, "is_integrated", False) else "discrete",
            "driver_id": 0, "driver_name": "ROCm" if hip else "CUDA",
            "driver_info": f"torch {torch.__version__}, {'HIP ' + hip if hip else 'CUDA ' + str(torch.version.cuda)}"
                           + (f", cuDNN {cudnn}" if cudnn else ""),
            "driver_version": nvidia_driver_version(), "api_version": dotted3(hip or torch.version.cuda),
            "subgroup_size": int(getattr(props, "warp_size", 32)),
            # CUDA events: "a resolution of around 0.5 microseconds" (CUDA runtime API).
            "timestamp_period_ns": 500.0,
            "limits": {"device_local_heap_bytes": int(props.total_memory),
                       "multi_processor_count": int(props.multi_processor_count)},
            "features": {"compute_capability": f"{props.major}.{props.minor}", "fp16": True,
                         "bf16": bool(torch.cuda.is_bf16_supported()), "timestamps": True}}


def tool_record(torch):
    return {"name": "torch", "version": torch.__version__,
            "git_commit": str(getattr(torch.version, "git_version", None) or "unknown"),
            "build_type": "pytorch (tools/peers/torch_peer.py)",
            "compiler": f"Python {platform.python_version()}, numpy {np.__version__}"}


BACKEND_NAMES = {"CUDNN_ATTENTION": "cudnn", "FLASH_ATTENTION": "flash", "EFFICIENT_ATTENTION": "efficient",
                 "MATH": "math"}
ENABLED_FLAGS = {"CUDNN_ATTENTION": "cudnn_sdp_enabled", "FLASH_ATTENTION": "flash_sdp_enabled",
                 "EFFICIENT_ATTENTION": "mem_efficient_sdp_enabled", "MATH": "math_sdp_enabled"}


def sdpa_backend_order(torch):
    """The SDPA backends in the order torch's dispatcher tries them: its
    priority list where torch exposes it (torch._C._get_sdp_priority_order),
    else the default CUDNN, FLASH, EFFICIENT, MATH; only those enabled."""
    from torch.nn.attention import SDPBackend

    by_value = {int(getattr(SDPBackend, n)): getattr(SDPBackend, n) for n in BACKEND_NAMES}
    try:
        order = [by_value[int(p)] for p in torch._C._get_sdp_priority_order() if int(p) in by_value]
    except (AttributeError, RuntimeError, TypeError):
        order = [getattr(SDPBackend, n) for n in BACKEND_NAMES]
    enabled = []
    for b in order:
        flag = getattr(torch.backends.cuda, ENABLED_FLAGS[b.name], None)
        if flag is None or flag():
            enabled.append(b)
    return enabled


def detect_sdpa_backend(torch, call, device):
    """The backend the default call runs: the first, in the dispatcher's
    priority order, that runs these inputs when it alone is allowed
    (sdpa_kernel([backend])). This mirrors the dispatcher, which takes the
    first backend in that order whose constraints the inputs meet. The
    order is read after one default call: torch settles it lazily (torch
    2.11 on an H100 reports flash, efficient, math, cudnn before its first
    SDPA call and moves cudnn first with that call). Returns the backend,
    the order and the backends that refused the inputs."""
    from torch.nn.attention import sdpa_kernel

    call()
    synchronize(torch, device)
    order = sdpa_backend_order(torch)
    names = [BACKEND_NAMES[b.name] for b in order]
    refused = []
    for backend, name in zip(order, names):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with sdpa_kernel([backend]):
                    call()
                    synchronize(torch, device)
            return name, names, refused
        except RuntimeError:
            refused.append(name)
    return "none", names, refused


def dispatcher_choice(torch, q, k, v, kwargs):
    """What torch's own dispatcher says it runs (torch._fused_sdp_choice, a
    private function; None where this torch lacks it): a check on the trial."""
    from torch.nn.attention import SDPBackend

    choose = getattr(torch, "_fused_sdp_choice", None)
    if choose is None:
        return None
    try:
        value = int(choose(q, k, v, kwargs.get("attn_mask"), 0.0, kwargs.get("is_causal", False),
                           scale=kwargs.get("scale"), enable_gqa=kwargs.get("enable_gqa", False)))
    except (RuntimeError, TypeError):
        return None
    for name, short in BACKEND_NAMES.items():
        if int(getattr(SDPBackend, name)) == value:
            return short
    return str(value)


def synchronize(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def sleep_cycles_per_us(torch, device):
    """torch.cuda._sleep's cycles per microsecond, measured with events."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    cycles = 1_000_000
    start.record()
    torch.cuda._sleep(cycles)
    end.record()
    end.synchronize()
    return cycles / max(start.elapsed_time(end) * 1000.0, 1e-3)


def time_calls(torch, device, call, samples, cycles_per_us=None):
    """Times `samples` calls after WARMUP_CALLS: CUDA events around each call
    on a GPU, each preceded by a sleep kernel long enough for Python to
    enqueue the call (so the events time the GPU's work, not the launch);
    perf_counter_ns on the CPU. Returns (samples_ns, started_ns, timer info)."""
    launch_ns = []
    for _ in range(WARMUP_CALLS):
        t0 = time.perf_counter_ns()
        call()
        launch_ns.append(time.perf_counter_ns() - t0)
        synchronize(torch, device)
    if device.type != "cuda":
        times, started = [], []
        first = None
        for _ in range(samples):
            t0 = time.perf_counter_ns()
            call()
            t1 = time.perf_counter_ns()
            first = t0 if first is None else first
            times.append(t1 - t0)
            started.append(t0 - first)
        return times, started, {"timer": "perf_counter_ns"}
    sleep_us = 2.0 * min(launch_ns) / 1000.0 + 20.0
    cycles = int(sleep_us * cycles_per_us) if cycles_per_us else 0
    times, started, first = [], [], None
    for _ in range(samples):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if cycles:
            torch.cuda._sleep(cycles)
        start.record()
        call()
        end.record()
        end.synchronize()
        if first is None:
            first = start
        times.append(start.elapsed_time(end) * 1e6)
        started.append(first.elapsed_time(start) * 1e6)
    return times, started, {"timer": "cuda-event", "gpu_sleep_before_each_call_us": round(sleep_us, 1) if cycles else 0}


# --- the cases -----------------------------------------------------------------------


def random_tensor(torch, shape, dtype, device, generator):
    return torch.randn(shape, generator=generator, device=device, dtype=torch.float32).to(dtype)


def to_f64(t):
    return t.detach().to("cpu").double().numpy()


def attention_inputs(torch, case, device):
    """q, k, v, the mask argument (None, a bool mask or an additive bias) and
    is_causal, and the float64 bias by distance for the reference."""
    B, H, Hkv, N, M, D, causal, scale = attention_shape(case["variant"], case["params"])
    dtype = torch_dtype(torch, case["dtype"])
    gen = torch.Generator(device=device)
    gen.manual_seed(SEED)
    q = random_tensor(torch, (B, H, N, D), dtype, device, gen)
    k = random_tensor(torch, (B, Hkv, M, D), dtype, device, gen)
    v = random_tensor(torch, (B, Hkv, M, D), dtype, device, gen)
    table = None
    if case["variant"] == "attn.t5":
        table = t5_bias_table(t5_params(case["params"])[1], H, case["dtype"])
    by_rp = bias_by_distance(case["variant"], case["params"], H, N, M, table)
    mask, is_causal, mask_kind = None, False, "none"
    if case["variant"] == "attn.nope" and causal and N == M:
        is_causal, mask_kind = True, "is_causal"  # top-left and bottom-right agree when N == M
    elif case["variant"] == "attn.nope" and causal:
        idx = torch.arange(M, device=device)[None, :] - (torch.arange(N, device=device)[:, None] + (M - N))
        mask, mask_kind = (idx <= 0)[None, None], "bool [1,1,N,M] (bottom-right causal)"
    elif by_rp is not None:
        rp_index = (torch.arange(M, device=device)[None, :] - torch.arange(N, device=device)[:, None]) + (N - 1)
        table_dev = torch.from_numpy(by_rp).to(device=device, dtype=dtype)
        mask, mask_kind = table_dev[:, rp_index][None], "additive [1,H,N,M]"
    return {"q": q, "k": k, "v": v, "mask": mask, "is_causal": is_causal, "mask_kind": mask_kind, "by_rp": by_rp,
            "shape": (B, H, Hkv, N, M, D, causal, scale)}


def validate_attention(inputs, out, dtype):
    B, H, Hkv, N, M, D, causal, scale = inputs["shape"]
    by_rp = inputs["by_rp"]
    got, want = [], []
    rows = check_rows(N)
    for b in sorted({0, B - 1}):
        for h in sorted({0, H - 1}):
            kh = h // (H // Hkv)
            k, v = to_f64(inputs["k"][b, kh]), to_f64(inputs["v"][b, kh])
            q = to_f64(inputs["q"][b, h])
            o = to_f64(out[b, h])
            for i in rows:
                bias_row = np.zeros(M) if by_rp is None else by_rp[h, np.arange(M) - (i + M - N) + (M - 1)]
                want.append(attention_reference_row(q[i], k, v, scale, bias_row))
                got.append(o[i])
    return validation_record(got, want, dtype, len(got), B * H * N)


def run_attention(torch, case, device, cycles_per_us):
    import torch.nn.functional as F

    inputs = attention_inputs(torch, case, device)
    B, H, Hkv, N, M, D, causal, scale = inputs["shape"]
    kwargs = {"attn_mask": inputs["mask"], "is_causal": inputs["is_causal"], "scale": scale}
    if Hkv < H:
        kwargs["enable_gqa"] = True
    q, k, v = inputs["q"], inputs["k"], inputs["v"]

    def call():
        return F.scaled_dot_product_attention(q, k, v, **kwargs)

    backend, order, refused = detect_sdpa_backend(torch, call, device)
    choice = dispatcher_choice(torch, q, k, v, kwargs)
    out = call()
    synchronize(torch, device)
    validation = validate_attention(inputs, out, case["dtype"])
    del out
    times, started, timer = time_calls(torch, device, call, case["samples"], cycles_per_us)
    peer = {"sdpa_backend": backend, "sdpa_priority": order, "sdpa_refused": refused,
            "sdpa_dispatcher_choice": choice, "mask": inputs["mask_kind"], "enable_gqa": Hkv < H, **timer}
    return times, started, validation, peer


def run_rope(torch, case, device, cycles_per_us):
    B, H, N, D, offset, R, style, base, factor = rope_params(case["params"])
    dtype = torch_dtype(torch, case["dtype"])
    gen = torch.Generator(device=device)
    gen.manual_seed(SEED)
    x = random_tensor(torch, (B, H, N, D), dtype, device, gen)
    cos_np, sin_np = rope_cache(N, offset, R, style, base, factor)  # outside the timed call
    cos = torch.from_numpy(cos_np).to(device=device, dtype=dtype)
    sin = torch.from_numpy(sin_np).to(device=device, dtype=dtype)

    if style == "neox":
        def rotate(t):
            return torch.cat((-t[..., R // 2:], t[..., : R // 2]), dim=-1)
    else:
        def rotate(t):
            return torch.stack((-t[..., 1::2], t[..., 0::2]), dim=-1).flatten(-2)

    def call():
        if R == D:
            return x * cos + rotate(x) * sin
        xr = x[..., :R]
        return torch.cat((xr * cos + rotate(xr) * sin, x[..., R:]), dim=-1)

    y = call()
    synchronize(torch, device)
    got, want = [], []
    rows = check_rows(N)
    for b in sorted({0, B - 1}):
        for h in sorted({0, H - 1}):
            xs = to_f64(x[b, h])[rows]
            want.append(rope_reference(xs, [offset + n for n in rows], R, style, base, factor))
            got.append(to_f64(y[b, h])[rows])
    del y
    validation = validation_record(got, want, case["dtype"], len(got) * len(rows), B * H * N)
    times, started, timer = time_calls(torch, device, call, case["samples"], cycles_per_us)
    layout = "rotate_half (neox)" if style == "neox" else "rotate_every_two (gptj, interleaved)"
    return times, started, validation, {"layout": layout, "cache": "cos/sin [N,R] precomputed", **timer}


def run_case(torch, case, device, cycles_per_us):
    """One peer result; a case that raises is an error and the run goes on."""
    timing = "gpu-timestamp" if device.type == "cuda" else "wall-clock"
    runner = run_rope if case["variant"] == ROPE_VARIANT else run_attention
    try:
        times, started, validation, peer = runner(torch, case, device, cycles_per_us)
    except Skip as e:
        return result_record(case, "skipped", str(e))
    except Exception as e:  # out of memory, a backend's refusal, ...: recorded, the sweep goes on
        reason = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
        return result_record(case, "error", reason[:500])
    finally:
        gc.collect()  # the case's tensors, also those a traceback held
        if device.type == "cuda":
            torch.cuda.empty_cache()
    peer["source_ids"] = [r.get("id", "") for r in case["sources"]]
    stats = time_stats(times, started)
    if not validation["passed"]:
        return result_record(case, "failed", f"validation: nmse {validation['nmse']} > {NMSE_CEILING[case['dtype']]}",
                             stats, timing, validation, peer)
    if not stats["median"] > 0:
        return result_record(case, "error", "the timer gave a zero median", stats, timing, validation, peer)
    return result_record(case, "ok", "", stats, timing, validation, peer)


def progress_line(i, n, result):
    peer = result.get("peer", {})
    what = f"[{i}/{n}] {result['variant']} {result['impl']} {result['dtype']} {result['label'] or ''}".rstrip()
    if result["status"] in ("ok", "failed"):
        us = result["time_ns"]["median"] / 1000.0
        backend = ""
        if "sdpa_backend" in peer:
            choice = peer.get("sdpa_dispatcher_choice")
            differs = f", torch._fused_sdp_choice: {choice}" if choice and choice != peer["sdpa_backend"] else ""
            backend = f" ({peer['sdpa_backend']}{differs})"
        nmse = result["validation"]["nmse"]
        nmse_text = f"{nmse:.1e}" if nmse is not None else "non-finite"
        return f"{what}  {result['status']}{backend}  {us:.2f} us  nmse {nmse_text}"
    return f"{what}  {result['status']}: {result['reason']}"


# --- command line -----------------------------------------------------------------------


class OneLineParser(argparse.ArgumentParser):
    def error(self, message):
        raise BadInput(message)


def parse_args(argv):
    p = OneLineParser(prog="torch_peer.py", description=__doc__.splitlines()[0])
    p.add_argument("report", help="a pebench report (pebench run --out)")
    p.add_argument("--out", required=True, help="the peer report to write (never the input)")
    p.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu (default cuda)")
    return p.parse_args(argv)


def open_device(torch, name):
    try:
        device = torch.device(name)
    except RuntimeError as e:
        raise BadInput(f"--device {name}: {e}")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise BadInput(f"--device {name}: CUDA is not available to torch {torch.__version__}")
    if device.type not in ("cuda", "cpu"):
        raise BadInput(f"--device {name}: only cuda and cpu are supported")
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        if not 0 <= index < torch.cuda.device_count():
            raise BadInput(f"--device {name}: there are {torch.cuda.device_count()} CUDA devices")
        device = torch.device("cuda", index)
        torch.cuda.set_device(device)
    return device


def main(argv):
    args = parse_args(argv)
    check_output_path(args.out, args.report)
    source = load_pebench_report(args.report)
    cases = peer_cases(source)
    if not cases:
        raise BadInput(f"{args.report}: no {', '.join(ATTN_VARIANTS)} or {ROPE_VARIANT} result to time")
    torch = import_torch()
    device = open_device(torch, args.device)
    cycles_per_us = None
    if device.type == "cuda" and hasattr(torch.cuda, "_sleep"):
        cycles_per_us = sleep_cycles_per_us(torch, device)
    results = []
    for i, case in enumerate(cases, 1):
        results.append(run_case(torch, case, device, cycles_per_us))
        print(progress_line(i, len(cases), results[-1]), file=sys.stderr, flush=True)
    extra = {"device": str(device), "allow_tf32_matmul": bool(getattr(torch.backends.cuda.matmul, "allow_tf32", False))}
    doc = report_document(results, device_record(torch, device), tool_record(torch),
                          ["torch_peer.py"] + list(argv), args.report, source, extra)
    write_report_atomic(args.out, doc)
    counts = {s: sum(r["status"] == s for r in results) for s in ("ok", "failed", "skipped", "error")}
    print(f"{counts['ok']} ok, {counts['failed']} failed, {counts['error']} errors, {counts['skipped']} skipped; "
          f"report: {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BadInput as e:
        print(f"torch_peer.py: {e}", file=sys.stderr)
        sys.exit(2)
