#!/usr/bin/python3
"""tools/peers/torch_peer.py without torch: its numpy parts against the facts of
encodings.md, and a report its writer produces, which `pebench compare` must
match against a pebench report of the same cases. With torch importable, also
the whole peer end to end on --device cpu (otherwise that part says SKIPPED).

Run: /usr/bin/python3 tests/peers_test.py PEBENCH_EXE SCHEMA.json WORKDIR
"""
import importlib.util
import json
import math
import os
import subprocess
import sys
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PEER_PATH = os.path.join(HERE, "..", "tools", "peers", "torch_peer.py")
LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
PEBENCH = SCHEMA = WORK = None  # from the command line

spec = importlib.util.spec_from_file_location("torch_peer", PEER_PATH)
peer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peer)


def runs(*groups):
    """The spec's run-length notation: (value, count) or a bare value."""
    out = []
    for g in groups:
        out.extend([g[0]] * g[1] if isinstance(g, tuple) else [g])
    return out


class AlibiSlopes(unittest.TestCase):
    def test_power_of_two(self):
        np.testing.assert_array_equal(peer.alibi_slopes(8), [2.0**-e for e in range(1, 9)])
        np.testing.assert_array_equal(peer.alibi_slopes(2), [2.0**-4, 2.0**-8])

    def test_twelve_heads(self):
        # encodings.md: H=12 -> 2^-1..2^-8, 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5
        want = [2.0**-e for e in range(1, 9)] + [2.0**-0.5, 2.0**-1.5, 2.0**-2.5, 2.0**-3.5]
        np.testing.assert_allclose(peer.alibi_slopes(12), want, rtol=1e-15)

    def test_bias_causal_and_not(self):
        N, M, H = 3, 5, 2
        m = peer.alibi_slopes(H)
        causal = peer.expand_bias(peer.bias_by_distance("attn.alibi", {"causal": True}, H, N, M), N, M)
        both = peer.expand_bias(peer.bias_by_distance("attn.alibi", {"causal": False}, H, N, M), N, M)
        for h in range(H):
            for i in range(N):
                ip = i + M - N
                for j in range(M):
                    self.assertEqual(both[h, i, j], -m[h] * abs(ip - j))
                    self.assertEqual(causal[h, i, j], -m[h] * (ip - j) if j <= ip else -np.inf)


class T5Buckets(unittest.TestCase):
    def test_bidirectional_facts(self):
        got = peer.t5_buckets(np.arange(-40, 41), True, 32, 128).tolist()
        want = runs((12, 9), (11, 9), (10, 7), (9, 4), (8, 4), 7, 6, 5, 4, 3, 2, 1, 0,
                    17, 18, 19, 20, 21, 22, 23, (24, 4), (25, 4), (26, 7), (27, 9), (28, 9))
        self.assertEqual(got, want)
        # First |rp| of buckets 8..15 (and 24..31), where a float log is one ulp low at 16, 32, 64.
        firsts = [8, 12, 16, 23, 32, 46, 64, 91]
        for b, n in enumerate(firsts):
            self.assertEqual(peer.t5_buckets(-n, True, 32, 128), 8 + b)
            self.assertEqual(peer.t5_buckets(n, True, 32, 128), 24 + b)
            if n > 8:
                self.assertEqual(peer.t5_buckets(-(n - 1), True, 32, 128), 8 + b - 1)
        self.assertEqual(peer.t5_buckets(-10**6, True, 32, 128), 15)
        before = peer.t5_buckets(-np.arange(31), True, 32, 128).tolist()
        self.assertEqual(before, [0, 1, 2, 3, 4, 5, 6, 7, 8, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 10, 10, 10, 10,
                                  11, 11, 11, 11, 11, 11, 11, 11])

    def test_unidirectional_facts(self):
        self.assertEqual(peer.t5_buckets(np.arange(1, 50), False, 32, 128).tolist(), [0] * 49)
        self.assertEqual(peer.t5_buckets(-np.arange(16), False, 32, 128).tolist(), list(range(16)))
        firsts = [16, 19, 21, 24, 27, 31, 35, 40, 46, 52, 59, 67, 77, 87, 99, 113]
        for b, n in enumerate(firsts):
            self.assertEqual(peer.t5_buckets(-n, False, 32, 128), 16 + b)
            self.assertEqual(peer.t5_buckets(-(n - 1), False, 32, 128), 15 + b)

    def test_bias_reads_the_table_at_each_distance(self):
        N, M, H = 4, 40, 3
        table = peer.t5_bias_table(32, H, "f32")
        for causal in (False, True):
            params = {"causal": causal, "num_buckets": 32, "max_distance": 128, "bidirectional": not causal}
            bias = peer.expand_bias(peer.bias_by_distance("attn.t5", params, H, N, M, table), N, M)
            for i in range(N):
                for j in range(M):
                    rp = j - (i + M - N)
                    b = peer.t5_buckets(rp, not causal, 32, 128)
                    want = -np.inf if causal and rp > 0 else table[b]
                    np.testing.assert_array_equal(bias[:, i, j], want)


class BottomRightCausal(unittest.TestCase):
    def test_queries_are_the_last_positions(self):
        # N 2, M 5: row 0 sits at i' = 3 (keys 0..3), row 1 at 4 (keys 0..4).
        np.testing.assert_array_equal(peer.causal_visible(2, 5), [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]])
        np.testing.assert_array_equal(peer.causal_visible(3, 3), np.tril(np.ones((3, 3))))
        np.testing.assert_array_equal(peer.distances(2, 5), [[-3, -2, -1, 0, 1], [-4, -3, -2, -1, 0]])
        nope = peer.expand_bias(peer.bias_by_distance("attn.nope", {"causal": True}, 1, 2, 5), 2, 5)
        np.testing.assert_array_equal(np.isfinite(nope[0]), peer.causal_visible(2, 5))
        self.assertIsNone(peer.bias_by_distance("attn.nope", {"causal": False}, 1, 2, 5))

    def test_reference_row(self):
        rng = np.random.default_rng(1)
        q, k, v = rng.standard_normal(4), rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
        bias = np.array([0.5, -1.0, 0.0, 2.0, -np.inf])
        s = 0.5 * (k @ q) + bias
        w = np.exp(s[:4] - s[:4].max())
        np.testing.assert_allclose(peer.attention_reference_row(q, k, v, 0.5, bias), (w / w.sum()) @ v[:4],
                                   rtol=1e-14)


class Rope(unittest.TestCase):
    def test_hand_value(self):
        # R = D = 2: th_0 = 1, position 1 rotates (1, 0) to (cos 1, sin 1), both layouts.
        for style in ("neox", "gptj"):
            cos, sin = peer.rope_cache(1, 1, 2, style, 10000.0)
            y = peer.rope_apply_hf(np.array([[1.0, 0.0]]), cos, sin, style)
            np.testing.assert_allclose(y, [[math.cos(1), math.sin(1)]], rtol=1e-15)

    def test_hf_form_equals_the_pair_rotation(self):
        rng = np.random.default_rng(2)
        x = rng.standard_normal((5, 12))
        for style in ("neox", "gptj"):
            for R in (12, 8):
                for offset in (0, 1000):
                    cos, sin = peer.rope_cache(5, offset, R, style, 500.0, 1.25)
                    got = peer.rope_apply_hf(x, cos, sin, style)
                    want = peer.rope_reference(x, np.arange(offset, offset + 5), R, style, 500.0, 1.25)
                    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
                    np.testing.assert_array_equal(got[:, R:], x[:, R:])

    def test_unimplemented_parameters_are_skipped(self):
        base = {"batch": 1, "heads": 2, "seq": 8, "dim": 16, "scaling": "none", "dtype": "f32", "impl": "default"}
        self.assertEqual(peer.rope_params(base)[5], 16)
        for bad in ({"scaling": "yarn"}, {"positions": "mrope"}, {"xpos_scale_base": 512}, {"wobble": 1}):
            with self.assertRaises(peer.Skip):
                peer.rope_params({**base, **bad})
        peer.rope_params({**base, "positions": "linear", "xpos_scale_base": 0})
        with self.assertRaises(peer.Skip):
            peer.attention_shape("attn.nope", {"seq": 8, "window": 4})
        self.assertEqual(peer.attention_shape("attn.nope", {"seq": 8, "dim": 16, "window": 0})[7], 0.25)
        self.assertEqual(peer.attention_shape("attn.t5", {"seq": 8, "dim": 16})[7], 1.0)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def pebench_report():
    """A pebench report of the peer's variants on lavapipe (made once)."""
    path = os.path.join(WORK, "pebench.json")
    if not os.path.exists(path):
        env = dict(os.environ)
        if "VK_DRIVER_FILES" not in env and os.path.exists(LAVAPIPE_ICD):
            env["VK_DRIVER_FILES"] = LAVAPIPE_ICD
        r = run([PEBENCH, "run", "--variant", "attn.nope,attn.alibi,attn.t5,rope.apply", "--seq", "64", "--heads", "2",
                 "--dim", "16", "--benchmark_min_time=0.02", "--quiet", "--no-peak", "--out", path], env=env)
        if r.returncode != 0:
            raise AssertionError(f"pebench run failed ({r.returncode}): {r.stdout}{r.stderr}")
    with open(path) as f:
        return path, json.load(f)


def check_schema(test, path):
    try:
        import jsonschema
    except ImportError:
        print("SKIPPED (part): python3-jsonschema is missing, the schema check did not run", file=sys.stderr)
        return
    with open(SCHEMA) as f:
        validator = jsonschema.Draft202012Validator(json.load(f))
    with open(path) as f:
        errors = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(json.load(f))]
    test.assertEqual(errors, [])


class ReportWriter(unittest.TestCase):
    def fake_peer_report(self, source_path, source):
        """What torch_peer.py writes, with made-up times: 2x pebench's flash median."""
        cases = peer.peer_cases(source)
        results = []
        for case in cases:
            flash = [r for r in case["sources"] if r["impl"] in ("flash", "default")][0]
            times = [2 * x for x in flash["time_ns"]["samples"]]
            stats = peer.time_stats(times, [1000.0 * i for i in range(len(times))])
            ref = np.ones((4, 3))
            validation = peer.validation_record(ref * (1 + 1e-5), ref, case["dtype"], 4, 128)
            results.append(peer.result_record(case, "ok", "", stats, "gpu-timestamp", validation,
                                              {"sdpa_backend": "flash", "timer": "cuda-event"}))
        device = {"index": 0, "name": source["devices"][0]["name"], "vendor_id": 0x10DE, "device_id": 0,
                  "device_type": "discrete", "driver_id": 0, "driver_name": "CUDA", "driver_info": "test",
                  "driver_version": "1.0", "api_version": "13.0.0", "subgroup_size": 32,
                  "timestamp_period_ns": 500.0, "limits": {}, "features": {}}
        tool = {"name": "torch", "version": "0.0-test", "git_commit": "unknown", "build_type": "test",
                "compiler": "none"}
        return peer.report_document(results, device, tool, ["torch_peer.py", source_path], source_path, source)

    def test_one_case_per_variant_dtype_and_params(self):
        _, source = pebench_report()
        cases = peer.peer_cases(source)
        self.assertEqual([c["variant"] for c in cases], ["attn.nope", "attn.alibi", "attn.t5", "rope.apply"])
        for c in cases:
            self.assertEqual(c["samples"], max(len(r["time_ns"]["samples"]) for r in c["sources"]))
            flash = [r for r in c["sources"] if r["impl"] == "flash"] or c["sources"]
            self.assertEqual(c["flops"], flash[0]["flops"])

    def test_written_report_is_valid_and_compare_matches_it(self):
        source_path, source = pebench_report()
        out = os.path.join(WORK, "peer.json")
        peer.write_report_atomic(out, self.fake_peer_report(source_path, source))
        self.assertEqual([n for n in os.listdir(WORK) if n.startswith(".torch_peer.")], [])
        check_schema(self, out)
        with open(out) as f:
            written = json.load(f)
        for r in written["results"]:
            self.assertAlmostEqual(r["gbps"], r["bytes"] / r["time_ns"]["median"])
            self.assertEqual(r["params"]["impl"], r["impl"])

        text = run([PEBENCH, "compare", source_path, out])
        self.assertEqual(text.returncode, 0, text.stdout + text.stderr)
        for paired in ("flash vs torch-sdpa", "default vs torch", "impls differ", "torch 0.0-test"):
            self.assertIn(paired, text.stdout)
        js = run([PEBENCH, "compare", source_path, out, "--format", "json"])
        self.assertEqual(js.returncode, 0, js.stderr)
        pair = json.loads(js.stdout)["comparisons"][0]
        matched = {(c["variant"], c["impl"], c["new_impl"]): c["ratio"] for c in pair["cases"]}
        self.assertEqual(sorted(matched), [("attn.alibi", "flash", "torch-sdpa"), ("attn.nope", "flash", "torch-sdpa"),
                                           ("attn.t5", "flash", "torch-sdpa"), ("rope.apply", "default", "torch")])
        for ratio in matched.values():
            self.assertAlmostEqual(ratio, 2.0)
        self.assertEqual(sorted(c["impl"] for c in pair["only_in_base"]), ["naive"] * 3)
        self.assertEqual(pair["only_in_new"], [])
        naive = run([PEBENCH, "compare", source_path, out, "--impl", "naive"])
        self.assertEqual(naive.returncode, 0, naive.stdout + naive.stderr)
        self.assertIn("naive vs torch-sdpa", naive.stdout)

    def test_bad_input_is_one_line_and_exit_2(self):
        source_path, _ = pebench_report()
        not_json = os.path.join(WORK, "not.json")
        with open(not_json, "w") as f:
            f.write("{")
        for args in ([source_path, "--out", source_path], [not_json, "--out", os.path.join(WORK, "x.json")],
                     [source_path, "--out", os.path.join(WORK, "missing", "x.json")], [source_path]):
            r = run([sys.executable, PEER_PATH] + args)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertEqual(r.stdout, "")


class EndToEndOnCpu(unittest.TestCase):
    def test_peer_on_cpu_against_pebench(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            print("SKIPPED (part): torch is not importable here; the --device cpu end-to-end run did not run",
                  file=sys.stderr)
            return
        source_path, _ = pebench_report()
        out = os.path.join(WORK, "peer-cpu.json")
        r = run([sys.executable, PEER_PATH, source_path, "--out", out, "--device", "cpu"])
        self.assertEqual(r.returncode, 0, r.stderr)
        check_schema(self, out)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual([x["status"] for x in doc["results"]], ["ok"] * 4, r.stderr)
        self.assertTrue(all(x["timing"] == "wall-clock" for x in doc["results"]))
        c = run([PEBENCH, "compare", source_path, out])
        self.assertEqual(c.returncode, 0, c.stdout + c.stderr)
        self.assertIn("flash vs torch-sdpa", c.stdout)


if __name__ == "__main__":
    if len(sys.argv) < 4:
        print(__doc__)
        sys.exit(2)
    PEBENCH, SCHEMA, WORK = (os.path.abspath(a) for a in sys.argv[1:4])
    os.makedirs(WORK, exist_ok=True)
    for name in ("pebench.json", "peer.json", "peer-cpu.json"):
        if os.path.exists(os.path.join(WORK, name)):
            os.unlink(os.path.join(WORK, name))
    unittest.main(argv=[sys.argv[0]] + sys.argv[4:], verbosity=1)
