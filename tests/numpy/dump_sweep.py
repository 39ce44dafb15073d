#!/usr/bin/python3
"""Dump a small sweep of every registered variant with `pebench run --dump`.

usage: dump_sweep.py PEBENCH DUMP_DIR REPORT_DIR

Variants come from `pebench list --json`, so a new variant is dumped (and
then checked, or flagged unknown by check_dumps.py) without editing this file.
Each variant runs its family's small shapes in both dtypes and every impl,
plus the parameter values worth checking (sinusoidal layouts, rope styles,
partial rotary_dim, every scaling with NTK active, causal 0/1, GQA, M != N,
buckets past their exact range; issue 43's RoPE forms: YaRN's mscale,
mscale_all_dim and truncate, LongRoPE on both sides of L = L0, M-RoPE in both
layouts, xPos for q and k; fairseq's sinusoid with padding_idx and an odd
d_model). Only keys the variant has are passed.
Exit 1 when pebench rejects the command line, a case errors, or a case that
ran has no dump.
"""
import glob
import json
import os
import subprocess
import sys

# Family shapes: small, with B > 1, GQA (H=4, Hkv=2) and M != N for attention.
FAMILY = {
    "abs": {"batch": "2", "seq": "7", "d_model": "16", "offset": "3"},
    "rope": {"batch": "2", "heads": "2", "seq": "5", "dim": "16", "offset": "3"},
    "attn": {"batch": "2", "heads": "4", "kv_heads": "2", "seq": "5", "kv_seq": "5,9", "dim": "8", "causal": "0,1"},
}
OTHER_FAMILY = {"batch": "2", "heads": "2", "seq": "5", "dim": "8", "d_model": "16"}

# Per variant: settings merged into the main run, and extra runs (merged onto the family shapes).
MAIN = {
    "abs.sinusoidal": {"layout": "interleaved,concat,fairseq"},
    "abs.hierarchical": {"table_len": "4"},  # p up to 9: both u[p / n0] and u[p % n0] vary
    "abs.conv": {"kernel": "3,5"},
    "abs.conv_grouped": {"kernel": "4,5", "groups": "4"},  # even K drops the extra output
    "abs.floater": {"offset": "0"},  # the spec's pos[n] = P(n dt) leaves offset's role open
    "abs.complex_order": {"vocab": "11"},
    # max_pos 4 < L = offset + seq, so NTK is active; R = 16 meets all three llama3 bands, and
    # offset 500 makes the low-frequency scalings (llama3) move the angles well past f32 noise.
    "rope.apply": {"offset": "0,500", "style": "neox,gptj", "rotary_dim": "16,8",
                   "scaling": "none,linear,ntk,yarn,llama3", "max_pos": "4"},
    "attn.shaw": {"max_rel": "3"},  # |j - i'| reaches 8: clipped
}
# M-RoPE: seq 32 gives Qwen2-VL's fill an image of 4 x 4 patches (a = 8: text 0..7, image tokens
# 8..23 at (8, 8 + r, 8 + c), text from 12), so the three rows differ by up to 3; base 100 makes
# even the last pairs (th_7 = 100^(-14/16) = 0.018) turn visibly between them.
MROPE = {"seq": "32", "positions": "mrope", "mrope_layout": "chunked,interleaved", "base": "100"}
EXTRA = {
    "abs.learned": [{"table_len": "12", "dtype": "f32"}],  # L > offset + N
    # fairseq: an odd d_model (last column 0) and the smallest one (h = 2), rows shifted by padding_idx.
    "abs.sinusoidal": [{"layout": "fairseq", "d_model": "15,4", "padding_idx": "0,5", "dtype": "f32"}],
    "abs.recurrent": [{"seq": "40", "offset": "1000", "dtype": "f32,f16"}],  # error growth with position
    "rope.apply": [
        {"offset": "20000", "seq": "3", "dtype": "f32", "scaling": "none,yarn"},
        # YaRN, DeepSeek's and gpt-oss's forms: at s = 40 the attention factor is g(s,1) = 1.3689 (mscale
        # alone, or mscale_all_dim 0), g(s,.707)/g(s,1) = 0.9211 or 1; R = 16 puts corr(32) = 2.62 and
        # corr(1) = 5.63 inside [0, R/2), so truncate moves the ramp; offset 500 makes that visible.
        {"offset": "500", "scaling": "yarn", "factor": "40", "mscale": "0.707,1", "mscale_all_dim": "0,1",
         "truncate": "true,false", "dtype": "f32,f16"},
        # LongRoPE: L = offset + N = 8 against L0 = 7 (long_factor) and 8 (short_factor, L = L0).
        {"scaling": "longrope", "orig_max_pos": "7,8", "style": "neox,gptj", "dtype": "f32,f16"},
        {"scaling": "longrope", "offset": "500", "orig_max_pos": "64,4096", "factor": "1,16", "dtype": "f32"},
        # M-RoPE, both layouts with their default sections (R 16: 2:3:3 and 4:2:2; R 8: 2:1:1 both)...
        dict(MROPE, style="neox,gptj", rotary_dim="16,8", dtype="f32,f16"),
        # ... a given section, and the scalings composed (L = offset + N = 35 > max_pos 4 for ntk).
        dict(MROPE, mrope_section="3:3:2", dtype="f32"),
        dict(MROPE, scaling="ntk,yarn,longrope", max_pos="4", orig_max_pos="16", dtype="f32"),
        # xPos for q and k: at offset 0 the factors are within 1 +- 0.01 of 1 (c = 3), at 500 far from 1
        # (c = 253: zeta_0^(+-250/512) = 0.54, 1.84); scale base 8 on 9 tokens reaches 0.53..1.87.
        {"offset": "0,500", "xpos_scale_base": "512", "tensor": "q,k", "style": "gptj,neox",
         "dtype": "f32,f16"},
        {"offset": "0", "seq": "9", "xpos_scale_base": "8", "tensor": "q,k", "style": "gptj", "dtype": "f32"},
    ],
    "attn.rope": [
        {"kv_seq": "9", "causal": "1", "dtype": "f32", "style": "gptj", "rotary_dim": "4",
         "scaling": "ntk,yarn,llama3", "max_pos": "4"},
        # YaRN with DeepSeek's mscale pair (attention factor 0.9211 vs 1.3689) and truncate=false.
        {"kv_seq": "9", "causal": "1", "dtype": "f32", "scaling": "yarn", "factor": "40", "mscale": "0.707,1",
         "mscale_all_dim": "1", "truncate": "false", "base": "100"},
        # LongRoPE: L = M = 9 against L0 = 8 (long) and 9 (short).
        {"kv_seq": "9", "causal": "0", "scaling": "longrope", "orig_max_pos": "8,9", "dtype": "f32,f16"},
        # M-RoPE over 32 keys (queries i' = 27..31 read pos_ids columns 27..31, keys the image too).
        {"kv_seq": "32", "causal": "0,1", "dim": "16", "positions": "mrope", "mrope_layout": "chunked,interleaved",
         "base": "100", "dtype": "f32,f16"},
        # xPos: scores carry zeta_t^((i' - j)/scale_base); q and k take inverse factors.
        {"kv_seq": "9", "causal": "0,1", "style": "gptj", "xpos_scale_base": "8,512", "dtype": "f32"},
        {"kv_seq": "9", "causal": "1", "style": "gptj", "xpos_scale_base": "512", "dtype": "f16"},
    ],
    "attn.alibi": [{"heads": "6", "kv_heads": "3", "dtype": "f32"}],  # not a power of two
    # KERPLE is causal only (causal=0 is skipped); both kernels, decode over 130 keys.
    "attn.kerple": [{"kind": "power", "causal": "1"}, {"seq": "1", "kv_seq": "130", "causal": "1", "kind": "log,power"}],
    # FIRE: rows below fire_L (the per-distance table) and above it (the MLP per score); decode.
    "attn.fire": [{"causal": "1", "fire_L": "3", "mlp_width": "5"},
                  {"seq": "1", "kv_seq": "130", "causal": "1", "fire_L": "64"}],
    # CoPE: npos 4 (most positions clamp) causal and not, both dtypes; decode over 130 keys (one
    # key split: the suffix sums run over every key of the row) with cope_nodiv both ways.
    "attn.cope": [{"npos": "4", "causal": "0,1", "dtype": "f32,f16"},
                  {"seq": "1", "kv_seq": "130", "causal": "0,1", "cope_nodiv": "true,false", "dtype": "f32"}],
    "attn.t5": [{"seq": "4", "kv_seq": "40", "dtype": "f32"}],  # log buckets
    "attn.tupe": [{"seq": "4", "kv_seq": "40", "dtype": "f32"}],
    "attn.deberta": [{"seq": "4", "kv_seq": "40", "dtype": "f32", "position_buckets": "8",
                      "max_relative_positions": "32"}],  # log buckets and the clamp
    # Decode over 130 keys: flash's direct mode with three key splits and attn_combine (Shaw's far
    # splits reach idx 0 only; XL's slots read their own rk rows; complex combines o and oi).
    "attn.shaw": [{"seq": "1", "kv_seq": "130", "dtype": "f32", "max_rel": "3"}],
    "attn.xl": [{"seq": "1", "kv_seq": "130", "dtype": "f32"}],
    "attn.complex": [{"seq": "1", "kv_seq": "130", "dtype": "f32"}],
}
AXIS_FLAGS = {"batch": "--batch", "seq": "--seq", "kv_seq": "--kv-seq", "heads": "--heads",
              "kv_heads": "--kv-heads", "dim": "--dim", "dtype": "--dtype", "causal": "--causal"}


def command(exe, variant, settings, dump_dir, report):
    keys = {p["key"] for p in variant["params"]}
    args = [exe, "run", "--variant", variant["id"], "--impl", ",".join(variant["impls"]),
            "--dump", dump_dir, "--out", report, "--quiet", "--benchmark_min_time=0.001",
            "--no-peak"]  # the dumps are what is checked, not speed
    for key, value in settings.items():
        if key not in keys:
            continue
        args += [AXIS_FLAGS[key], value] if key in AXIS_FLAGS else ["--param", f"{key}={value}"]
    return args


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    exe, dump_dir, report_dir = argv[1:]
    os.makedirs(report_dir, exist_ok=True)
    variants = json.loads(subprocess.run([exe, "list", "--json"], check=True, capture_output=True, text=True).stdout)
    problems = []
    for v in variants:
        base = dict(FAMILY.get(v["family"], OTHER_FAMILY), dtype="f32,f16")
        runs = [dict(base, **MAIN.get(v["id"], {}))] + [dict(base, **e) for e in EXTRA.get(v["id"], [])]
        for n, settings in enumerate(runs):
            report = os.path.join(report_dir, f"{v['id']}-{n}.json")
            args = command(exe, v, settings, dump_dir, report)
            proc = subprocess.run(args, capture_output=True, text=True)
            print(f"{v['id']} run {n}: {proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ''}")
            if proc.returncode not in (0, 1) or not os.path.isfile(report):
                problems.append(f"{' '.join(args)}: exit {proc.returncode}: {proc.stderr.strip()}")
                continue
            with open(report) as f:
                results = json.load(f)["results"]
            for r in results:
                if r["status"] == "error":
                    problems.append(f"{r['variant']} {r['impl']} {r['dtype']}: error: {r.get('reason')}")
                elif r["status"] in ("ok", "failed"):
                    if not os.path.isfile(os.path.join(dump_dir, r["id"], "meta.json")):
                        problems.append(f"{r['id']}: ran ({r['status']}) but has no dump")
                    if r["status"] == "failed":
                        print(f"  note: pebench's own validation failed {r['id']}: {r.get('reason')}")
    dumped = len(glob.glob(os.path.join(dump_dir, "*", "meta.json")))
    print(f"{len(variants)} variants, {dumped} cases dumped under {dump_dir}")
    for p in problems:
        print(f"dump_sweep: error: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
