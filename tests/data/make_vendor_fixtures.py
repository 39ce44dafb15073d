#!/usr/bin/env python3
"""Writes vendor_{a,b,c}.json: small crafted pebench reports for the compare
and HTML tests (attention encodings against attn.nope on three devices).

Times follow a made-up model so that every number a test checks is known in
closed form: median(nope, naive) = 1000 ns * (seq/128)^2, flash 0.5x naive,
t5 1.5x nope, alibi 1.25x nope, f16 0.8x f32; device B runs 2x faster than A
and C 4x slower. Samples are median * (0.97, 0.99, 1, 1.01, 1.04), so the
median is exact. abs.learned has time 200 ns * seq/128.
Run from this folder: python3 make_vendor_fixtures.py
"""
import json

SPREAD = [0.97, 0.99, 1.0, 1.01, 1.04]
DEVICES = {"a": ("Vendor A GPU", 1.0), "b": ("Vendor B GPU", 0.5), "c": ("Vendor C GPU", 4.0)}
ENCODING = {"attn.nope": 1.0, "attn.t5": 1.5, "attn.alibi": 1.25}


def timing(median):
    s = [median * f for f in SPREAD]
    mean = sum(s) / len(s)
    sd = (sum((x - mean) ** 2 for x in s) / (len(s) - 1)) ** 0.5
    return {"median": median, "min": min(s), "max": max(s), "mean": mean, "stddev": sd, "samples": s}


def validation(passed=True, nmse=1e-9):
    return {"nmse": nmse, "max_abs": 1e-4, "max_rel": 2e-3, "tolerance": {"nmse": 1e-6, "model": "crafted"},
            "passed": passed, "rows_checked": 64, "rows_total": 64}


def report(tag):
    name, speed = DEVICES[tag]
    results = []
    for variant, enc in ENCODING.items():
        for impl, impl_f in (("naive", 1.0), ("flash", 0.5)):
            for dtype, dt_f in (("f32", 1.0), ("f16", 0.8)):
                for seq in (128, 256, 512):
                    params = {"batch": 1, "heads": 4, "kv_heads": 4, "dim": 64, "seq": seq, "kv_seq": seq,
                              "causal": 0, "dtype": dtype, "impl": impl}
                    if variant == "attn.t5":
                        params.update({"num_buckets": 32, "max_distance": 128, "bidirectional": True})
                    if variant == "attn.alibi":
                        params.update({"slopes": "geometric"})
                    median = 1000.0 * (seq / 128) ** 2 * impl_f * dt_f * enc * speed
                    results.append({
                        "id": f"d0-{variant}-{impl}-{dtype}-{seq}", "device": 0, "variant": variant, "impl": impl,
                        "dtype": dtype, "params": params, "label": f"batch=1 heads=4 seq={seq} dim=64",
                        "status": "ok", "reason": "", "time_ns": timing(median), "timing": "gpu-timestamp",
                        "bytes": 1.0, "flops": 1.0, "gbps": 1.0 / median, "gflops": 1.0 / median,
                        "validation": validation(), "vk_validation_errors": 0})
    for seq in (128, 1024):
        median = 200.0 * seq / 128 * speed
        results.append({
            "id": f"d0-abs.learned-default-f32-{seq}", "device": 0, "variant": "abs.learned", "impl": "default",
            "dtype": "f32", "params": {"batch": 1, "seq": seq, "d_model": 256, "table_len": seq, "offset": 0,
                                       "dtype": "f32", "impl": "default"},
            "label": f"batch=1 seq={seq} d_model=256", "status": "ok", "reason": "", "time_ns": timing(median),
            "timing": "gpu-timestamp", "bytes": 1.0, "flops": 1.0, "gbps": None, "gflops": None,
            "validation": validation(), "vk_validation_errors": 0})
    # One case that fails validation, one the variant rejects.
    results.append({
        "id": "d0-rope.apply-default-f16-fail", "device": 0, "variant": "rope.apply", "impl": "default",
        "dtype": "f16", "params": {"batch": 1, "heads": 4, "seq": 128, "dim": 64, "dtype": "f16", "impl": "default"},
        "label": "batch=1 heads=4 seq=128 dim=64", "status": "failed", "reason": "nmse 0.25 > tolerance 1e-06",
        "time_ns": timing(300.0 * speed), "timing": "gpu-timestamp", "bytes": 1.0, "flops": 1.0, "gbps": None,
        "gflops": None, "validation": validation(False, 0.25), "vk_validation_errors": 0})
    results.append({
        "id": "d0-rope.apply-default-f32-skip", "device": 0, "variant": "rope.apply", "impl": "default",
        "dtype": "f32", "params": {"batch": 1, "heads": 4, "seq": 128, "dim": 63, "dtype": "f32", "impl": "default"},
        "label": "batch=1 heads=4 seq=128 dim=63", "status": "skipped", "reason": "rotary_dim=63 must be even",
        "time_ns": None, "timing": None, "bytes": 0.0, "flops": 0.0, "gbps": None, "gflops": None,
        "validation": None, "vk_validation_errors": 0})
    return {
        "schema": "pebench.report/1",
        "tool": {"version": "0.1.0", "git_commit": "0123456789abcdef0123456789abcdef01234567",
                 "build_type": "Release", "compiler": "GNU 12.2.0"},
        "created": "2026-01-02T03:04:05Z", "command": ["pebench", "run", "--variant", "attn.*"],
        "host": {"os": "crafted", "cpu": "crafted", "logical_cores": 2},
        "devices": [{"index": 0, "name": name, "vendor_id": 4096 + ord(tag), "device_id": 1,
                     "device_type": "discrete-gpu", "driver_id": 1, "driver_name": f"{tag}-driver",
                     "driver_info": "crafted", "driver_version": "1.2.3", "api_version": "1.3.0",
                     "subgroup_size": 32, "timestamp_period_ns": 1.0, "limits": {}, "features": {}}],
        "results": results,
    }


for tag in DEVICES:
    with open(f"vendor_{tag}.json", "w") as f:
        json.dump(report(tag), f, indent=1)
        f.write("\n")
