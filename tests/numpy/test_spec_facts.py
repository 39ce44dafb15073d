#!/usr/bin/python3
"""spec_ref.py's helpers against the known-answer facts of encodings.md.

Run: /usr/bin/python3 tests/numpy/test_spec_facts.py  (unittest, no pytest needed)
"""
import math
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spec_ref as ref  # noqa: E402


def runs(*groups):
    """Expand the spec's run-length notation: (value, count) or a bare value."""
    out = []
    for g in groups:
        out.extend([g[0]] * g[1] if isinstance(g, tuple) else [g])
    return out


class Sinusoid(unittest.TestCase):
    def test_position_zero_is_sin0_cos0(self):
        for d in (2, 6, 16):
            inter = ref.sinusoid([0], d, 10000.0, "interleaved")[0]
            concat = ref.sinusoid([0], d, 10000.0, "concat")[0]
            np.testing.assert_array_equal(inter, np.tile([0.0, 1.0], d // 2))
            np.testing.assert_array_equal(concat, np.r_[np.zeros(d // 2), np.ones(d // 2)])

    def test_layouts_hold_the_same_pairs(self):
        pe_i = ref.sinusoid(np.arange(50), 12, 10000.0, "interleaved")
        pe_c = ref.sinusoid(np.arange(50), 12, 10000.0, "concat")
        np.testing.assert_array_equal(pe_i[:, 0::2], pe_c[:, :6])
        np.testing.assert_array_equal(pe_i[:, 1::2], pe_c[:, 6:])
        # t = 0 has w = 1: pe[p, 0] = sin(p); the last pair has w = base^(-(d-2)/d).
        np.testing.assert_allclose(pe_i[:, 0], np.sin(np.arange(50)), rtol=0, atol=1e-15)
        np.testing.assert_allclose(pe_i[:, 10], np.sin(np.arange(50) * 10000.0 ** (-10 / 12)), rtol=0, atol=1e-15)

    def test_recurrence_matches_the_closed_form(self):
        # encodings.md abs.recurrent: stepping (s,c) by th_t from (0,1) gives the interleaved sinusoid.
        d, base = 8, 10000.0
        th = base ** (-2.0 * np.arange(d // 2) / d)
        s, c = np.zeros(d // 2), np.ones(d // 2)
        for _ in range(37):
            s, c = s * np.cos(th) + c * np.sin(th), c * np.cos(th) - s * np.sin(th)
        closed = ref.sinusoid([37], d, base, "interleaved")[0]
        np.testing.assert_allclose(closed[0::2], s, atol=1e-12)
        np.testing.assert_allclose(closed[1::2], c, atol=1e-12)


class Yarn(unittest.TestCase):
    def test_spec_example(self):
        low, high, ramp, factor = ref.yarn_params(128, 1e4, 4.0, 4096)
        self.assertEqual(low, 20)
        self.assertEqual(high, 46)
        self.assertAlmostEqual(factor, 1.1386, places=4)
        self.assertEqual(len(ramp), 64)
        self.assertEqual(ramp[20], 0.0)
        self.assertEqual(ramp[46], 1.0)
        self.assertAlmostEqual(ramp[33], 13 / 26)

    def test_inv_freq_blends_between_extrapolation_and_interpolation(self):
        params = {"rotary_dim": 128, "base": 1e4, "scaling": "yarn", "factor": 4.0, "orig_max_pos": 4096,
                  "beta_fast": 32.0, "beta_slow": 1.0}
        th = 1e4 ** (-2.0 * np.arange(64) / 128)
        inv, af = ref.rope_inv_freq(params, seq_len=10)
        np.testing.assert_allclose(inv[:21], th[:21], rtol=1e-15)  # t <= low: kept
        np.testing.assert_allclose(inv[46:], th[46:] / 4, rtol=1e-15)  # t >= high: interpolated
        self.assertAlmostEqual(af, 0.1 * math.log(4) + 1)

    def test_equal_bounds_get_the_spec_nudge(self):
        # R=4, L0 tiny: both corrections clamp to 0, so high becomes 0.001 and no division by zero.
        low, high, ramp, _ = ref.yarn_params(4, 1e4, 2.0, 1.0)
        self.assertEqual(low, 0)
        self.assertAlmostEqual(high, 0.001)
        np.testing.assert_array_equal(ramp, [0.0, 1.0])


class Llama3(unittest.TestCase):
    L0 = 8192

    def scaled(self, wavelen):
        return float(ref.llama3_inv_freq(np.array([2 * math.pi / wavelen]))[0])

    def test_thresholds(self):
        th = lambda w: 2 * math.pi / w  # noqa: E731
        self.assertEqual(self.scaled(self.L0 / 4 - 1), th(self.L0 / 4 - 1))  # high frequency: kept
        self.assertAlmostEqual(self.scaled(self.L0 + 1), th(self.L0 + 1) / 8, delta=1e-20)  # low: divided by 8
        sm = (self.L0 / 4096 - 1) / 3  # in between: smooth
        self.assertAlmostEqual(self.scaled(4096), (1 - sm) * th(4096) / 8 + sm * th(4096), delta=1e-18)
        self.assertAlmostEqual(sm, 1 / 3)

    def test_continuous_at_both_edges(self):
        for w, expect_div in ((self.L0 / 4 + 1e-6, 1.0), (self.L0 - 1e-6, 8.0)):
            self.assertAlmostEqual(self.scaled(w) * expect_div / (2 * math.pi / w), 1.0, places=6)


class Rope(unittest.TestCase):
    def params(self, **kw):
        p = {"rotary_dim": 8, "base": 10000.0, "scaling": "none", "factor": 4.0, "max_pos": 16,
             "orig_max_pos": 4096, "beta_fast": 32.0, "beta_slow": 1.0, "low_freq_factor": 1.0,
             "high_freq_factor": 4.0, "attention_factor": 1.0, "style": "neox"}
        p.update(kw)
        return p

    def test_position_zero_is_identity_and_pass_through_dims_untouched(self):
        rng = np.random.default_rng(1)
        x = rng.standard_normal((2, 3, 12))
        for style in ("neox", "gptj"):
            y = ref.rope_rotate(x, np.arange(3), self.params(style=style), 3)
            np.testing.assert_array_equal(y[:, 0], x[:, 0])
            np.testing.assert_array_equal(y[..., 8:], x[..., 8:])
            np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-13)

    def test_pairs_of_each_style(self):
        x = np.zeros((1, 8))
        x[0, 0] = 1.0
        p1 = np.array([1])
        neox = ref.rope_rotate(x, p1, self.params(style="neox"), 2)[0]
        gptj = ref.rope_rotate(x, p1, self.params(style="gptj"), 2)[0]
        self.assertAlmostEqual(neox[0], math.cos(1))
        self.assertAlmostEqual(neox[4], math.sin(1))  # partner t + R/2
        self.assertAlmostEqual(gptj[1], math.sin(1))  # partner 2t + 1
        self.assertEqual(np.count_nonzero(neox), 2)
        self.assertEqual(np.count_nonzero(gptj), 2)

    def test_scores_depend_on_relative_position_only(self):
        rng = np.random.default_rng(2)
        q, k = rng.standard_normal((1, 8)), rng.standard_normal((1, 8))
        p = self.params()
        dot = lambda m, n: float(ref.rope_rotate(q, [m], p, 1)[0] @ ref.rope_rotate(k, [n], p, 1)[0])  # noqa: E731
        self.assertAlmostEqual(dot(3, 1), dot(103, 101), places=10)

    def test_ntk_grows_base_only_past_max_pos(self):
        th = 10000.0 ** (-2.0 * np.arange(4) / 8)
        inv, _ = ref.rope_inv_freq(self.params(scaling="ntk"), seq_len=16)
        np.testing.assert_array_equal(inv, th)
        inv, _ = ref.rope_inv_freq(self.params(scaling="ntk"), seq_len=32)
        base2 = 10000.0 * (4 * 32 / 16 - 3) ** (8 / 6)
        np.testing.assert_allclose(inv, base2 ** (-2.0 * np.arange(4) / 8), rtol=1e-15)
        self.assertEqual(inv[0], 1.0)

    def test_linear_divides(self):
        inv, af = ref.rope_inv_freq(self.params(scaling="linear"), seq_len=5)
        np.testing.assert_allclose(inv, 10000.0 ** (-2.0 * np.arange(4) / 8) / 4, rtol=1e-15)
        self.assertEqual(af, 1.0)


class Alibi(unittest.TestCase):
    def test_eight_heads(self):
        np.testing.assert_array_equal(ref.alibi_slopes(8), [2.0**-e for e in range(1, 9)])

    def test_twelve_heads(self):
        expect = [2.0**-e for e in range(1, 9)] + [2.0**-0.5, 2.0**-1.5, 2.0**-2.5, 2.0**-3.5]
        np.testing.assert_allclose(ref.alibi_slopes(12), expect, rtol=1e-15)


class T5Bucket(unittest.TestCase):
    def test_bidirectional_minus_40_to_40(self):
        expect = runs((12, 9), (11, 9), (10, 7), (9, 4), (8, 4), 7, 6, 5, 4, 3, 2, 1, 0,
                      17, 18, 19, 20, 21, 22, 23, (24, 4), (25, 4), (26, 7), (27, 9), (28, 9))
        self.assertEqual(len(expect), 81)
        got = [ref.t5_bucket(rp, True, 32, 128) for rp in range(-40, 41)]
        self.assertEqual(got, expect)

    def test_bidirectional_first_distance_of_each_log_bucket(self):
        firsts = [8, 12, 16, 23, 32, 46, 64, 91]
        for sign, first_bucket in ((-1, 8), (1, 24)):
            for b, n in enumerate(firsts):
                self.assertEqual(ref.t5_bucket(sign * n, True), first_bucket + b, n)
                self.assertEqual(ref.t5_bucket(sign * (n - 1), True), first_bucket + b - 1, n - 1)
        self.assertEqual(ref.t5_bucket(-10**6, True), 15)
        self.assertEqual(ref.t5_bucket(10**6, True), 31)

    def test_keys_before_the_query(self):
        expect = [0, 1, 2, 3, 4, 5, 6, 7, 8, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 10, 10, 10, 10,
                  11, 11, 11, 11, 11, 11, 11, 11]
        self.assertEqual([ref.t5_bucket(-d, True) for d in range(31)], expect)

    def test_unidirectional(self):
        for rp in range(1, 300):
            self.assertEqual(ref.t5_bucket(rp, False), 0)
        for n in range(16):
            self.assertEqual(ref.t5_bucket(-n, False), n)
        firsts = [16, 19, 21, 24, 27, 31, 35, 40, 46, 52, 59, 67, 77, 87, 99, 113]
        for b, n in enumerate(firsts):
            self.assertEqual(ref.t5_bucket(-n, False), 16 + b, n)
            self.assertEqual(ref.t5_bucket(-(n - 1), False), 16 + b - 1, n - 1)
        self.assertEqual(ref.t5_bucket(-10**6, False), 31)

    def test_table_helper_agrees(self):
        rps = np.arange(-40, 41).reshape(9, 9)
        np.testing.assert_array_equal(ref.t5_bucket_table(rps, True, 32, 128),
                                      [[ref.t5_bucket(int(r), True) for r in row] for row in rps])


class DebertaBucket(unittest.TestCase):
    FACTS = {132: 131, 135: 133, 140: 137, 150: 143, 200: 169, 256: 192, 300: 207, 400: 233, 500: 254,
             506: 255, 507: 255, 508: 255, 509: 255, 510: 255, 511: 255, 512: 256, 1024: 319}

    def test_small_distances_are_themselves(self):
        for d in range(-131, 132):
            self.assertEqual(ref.deberta_bucket(d, 256, 512), d)

    def test_log_facts_and_mirror(self):
        for d, b in self.FACTS.items():
            self.assertEqual(ref.deberta_bucket(d, 256, 512), b, d)
            self.assertEqual(ref.deberta_bucket(-d, 256, 512), -b, -d)
        self.assertEqual(ref.deberta_bucket(505, 256, 512), 254)

    def test_index_is_clamped(self):
        idx = ref.deberta_index_table(np.array([0, 5, -5, 1024, -1024]), 256, 512)
        np.testing.assert_array_equal(idx, [256, 261, 251, 511, 0])


class AttentionCore(unittest.TestCase):
    def test_gqa_head_mapping(self):
        k = np.arange(3)[None, :, None, None] * np.ones((1, 3, 2, 1))
        got = ref.expand_kv(k, 6)[0, :, 0, 0]
        np.testing.assert_array_equal(got, [0, 0, 1, 1, 2, 2])

    def test_causal_mask_uses_query_offset(self):
        p = ref.softmax_attend(np.zeros((1, 1, 2, 5)), True, 2, 5)[0, 0]
        np.testing.assert_allclose(p[0], [0.25, 0.25, 0.25, 0.25, 0])  # query 0 sits at i' = 3
        np.testing.assert_allclose(p[1], [0.2] * 5)

    def test_no_visible_key_gives_zero_row_not_nan(self):
        s = np.full((1, 1, 1, 3), -np.inf)
        p = ref.softmax_attend(s, False, 1, 3)
        np.testing.assert_array_equal(p, 0)

    def test_alibi_equals_nope_plus_bias(self):
        rng = np.random.default_rng(3)
        t = {n: rng.standard_normal(s) for n, s in (("q", (1, 2, 3, 4)), ("k", (1, 1, 5, 4)), ("v", (1, 1, 5, 4)))}
        base = {"scale": 0.5, "causal": True}
        a = ref.attn_alibi(t, base)["o"]
        # Head 0 slope 2^-4 (H=2): rows shift by a constant, so a strong slope must change the result.
        self.assertFalse(np.allclose(a, ref.attn_nope(t, base)["o"]))
        t0 = dict(t)
        t0["q"] = np.zeros_like(t["q"])
        o = ref.attn_alibi(t0, base)["o"][0, 0, 2]  # query at i' = 4 sees all 5 keys, weights ~ exp(-m (4 - j))
        w = np.exp(-(2.0**-4) * (4 - np.arange(5)))
        np.testing.assert_allclose(o, (w / w.sum()) @ t["v"][0, 0], rtol=1e-13)


if __name__ == "__main__":
    unittest.main(verbosity=1)
