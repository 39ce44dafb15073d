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


def rope_params(**kw):
    """A complete rope params dict (the keys check_dumps requires), overridden by kw."""
    p = {"rotary_dim": 8, "base": 10000.0, "scaling": "none", "factor": 4.0, "max_pos": 16, "orig_max_pos": 4096,
         "beta_fast": 32.0, "beta_slow": 1.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
         "attention_factor": 1.0, "style": "neox", "mscale": 0.0, "mscale_all_dim": 0.0, "truncate": True,
         "positions": "linear", "mrope_section": "2:1:1", "mrope_layout": "chunked", "xpos_scale_base": 0.0}
    p.update(kw)
    return p


class YarnMscale(unittest.TestCase):
    """encodings.md section 2, yarn's mscale, mscale_all_dim and truncate (HF _compute_yarn_parameters)."""

    def test_deepseek_v3_facts(self):
        p = rope_params(rotary_dim=64, scaling="yarn", factor=40.0, mscale=1.0, mscale_all_dim=1.0)
        low, high, _, af = ref.yarn_params(64, 1e4, 40.0, 4096, mscale=1.0, mscale_all_dim=1.0)
        self.assertEqual((low, high), (10, 23))
        self.assertEqual(af, 1.0)
        th, af2 = ref.rope_inv_freq(p, seq_len=1)
        self.assertEqual(af2, 1.0)
        self.assertAlmostEqual(th[12], 2.687936011143122e-02, delta=1e-17)
        self.assertAlmostEqual(th[16], 5.5e-03, delta=1e-17)

    def test_attention_factor_needs_both_mscales(self):
        self.assertAlmostEqual(ref.yarn_attention_factor(40.0, 1.0, 0.707), 1.08572639926, places=11)
        self.assertAlmostEqual(ref.yarn_attention_factor(40.0, 0.707, 0.0), 1.36888794541, places=11)
        self.assertAlmostEqual(ref.yarn_attention_factor(40.0, 0.0, 0.707), 1.36888794541, places=11)
        # Hand: g(4, 1) = 1 + 0.1 ln 4 = 1.138629436111989; g(4, .5) / g(4, 2) = (1 + .05 ln 4) / (1 + .2 ln 4)
        # = 1.0693147180559945 / 1.2772588722239781 = 0.8371949816203595; s <= 1 gives g = 1 whatever m.
        self.assertAlmostEqual(ref.yarn_attention_factor(4.0), 1.138629436111989, places=15)
        self.assertAlmostEqual(ref.yarn_attention_factor(4.0, 0.5, 2.0), 0.8371949816203595, places=15)
        self.assertEqual(ref.yarn_attention_factor(1.0, 0.5, 2.0), 1.0)
        self.assertEqual(ref.yarn_mscale(0.5, 3.0), 1.0)

    def test_gpt_oss_facts(self):
        p = rope_params(rotary_dim=64, base=150000.0, scaling="yarn", factor=32.0, truncate=False)
        low, high, _, af = ref.yarn_params(64, 150000.0, 32.0, 4096, truncate=False)
        self.assertAlmostEqual(low, 8.092779115512402, delta=1e-14)
        self.assertAlmostEqual(high, 17.39802450158856, delta=1e-13)
        self.assertAlmostEqual(af, 1.34657359028, places=11)
        self.assertAlmostEqual(ref.rope_inv_freq(p, 1)[0][12], 6.794959489732219e-03, delta=1e-17)
        self.assertEqual(ref.yarn_params(64, 150000.0, 32.0, 4096, truncate=True)[:2], (8, 18))
        self.assertAlmostEqual(ref.rope_inv_freq(dict(p, truncate=True), 1)[0][12], 7.015713910504388e-03,
                               delta=1e-17)

    def test_truncate_at_r8_by_hand(self):
        # R 8, base 1e4, L0 4096, s 40: corr(r) = 8 ln(4096/(2 pi r)) / (2 ln 1e4) gives corr(32) =
        # 1.3090301012897532, corr(1) = 2.814180079609659 (plain math.log, not spec_ref).
        # truncate: low 1, high 3, ramp_2 = 1/2, th'_2 = 1e-2 (1/80 + 1/2) = 0.005125 exactly by hand;
        # truncate=false: ramp_2 = (2 - 1.30903...)/(2.81418... - 1.30903...) = 0.45907046384940875,
        # th'_2 = 1e-2 (ramp/40 + 1 - ramp) = 0.005524062977468265.
        p = rope_params(scaling="yarn", factor=40.0)
        low, high, ramp, _ = ref.yarn_params(8, 1e4, 40.0, 4096, truncate=False)
        self.assertAlmostEqual(low, 1.3090301012897532, delta=1e-15)
        self.assertAlmostEqual(high, 2.814180079609659, delta=1e-15)
        self.assertAlmostEqual(ramp[2], 0.45907046384940875, delta=1e-15)
        self.assertAlmostEqual(ref.rope_inv_freq(p, 1)[0][2], 0.005125, delta=1e-18)
        self.assertAlmostEqual(ref.rope_inv_freq(dict(p, truncate=False), 1)[0][2], 0.005524062977468265,
                               delta=1e-17)


class LongRope(unittest.TestCase):
    SHORT, LONG = np.array([1.0, 1.5, 2.0, 4.0]), np.array([1.0, 2.0, 4.0, 8.0])

    def test_attention_factor(self):
        self.assertAlmostEqual(ref.longrope_attention_factor(32.0, 4096), math.sqrt(17 / 12), places=14)
        self.assertAlmostEqual(ref.longrope_attention_factor(32.0, 4096), 1.19023807142381, places=14)
        # Hand: ln 16 / ln 256 = 4 ln 2 / 8 ln 2 = 1/2, so s 16, L0 256 gives sqrt(3/2); s <= 1 gives 1.
        self.assertAlmostEqual(ref.longrope_attention_factor(16.0, 256), math.sqrt(1.5), places=15)
        self.assertEqual(ref.longrope_attention_factor(1.0, 256), 1.0)

    def test_branch_facts(self):
        p = rope_params(scaling="longrope", factor=32.0)
        f = {"short_factor": self.SHORT, "long_factor": self.LONG}
        th, af = ref.rope_inv_freq(p, 4096, f)  # L = L0 takes short
        np.testing.assert_allclose(th, [1, 0.0666666666666667, 5e-3, 2.5e-4], rtol=1e-14)
        self.assertAlmostEqual(af, 1.19023807142381, places=14)
        th, _ = ref.rope_inv_freq(p, 4097, f)
        np.testing.assert_allclose(th, [1, 0.05, 2.5e-3, 1.25e-4], rtol=1e-14)
        with self.assertRaises(ValueError):  # the lists are inputs: no silent default
            ref.rope_inv_freq(p, 4097, None)


class MRope(unittest.TestCase):
    X = np.arange(1.0, 13.0)[None]  # x = [1..12]
    CHUNKED = [6.996132108105, -6.097581357257, 2.152796165363, 3.799213359733, 4.928799714843, 5.983284468626,
               1.026711023579, 5.551531463626, 9.239343519450, 10.077994733439, 11.032086537504, 12.008343223255]
    INTERLEAVED = [6.996132108105, -1.524223369723, 1.721779187687, 3.495209348873, 4.952556167669,
                   5.983284468626, 1.026711023579, 8.104118898387, 9.329280595461, 10.187419281032,
                   11.021442165437, 12.008343223255]

    def rotate(self, layout, section, thw, x=None, **kw):
        p = rope_params(rotary_dim=12, positions="mrope", mrope_layout=layout, mrope_section=section, **kw)
        return ref.rope_rotate(self.X if x is None else x, np.array(thw).reshape(3, -1), p, 1)[0]

    def test_spec_facts_one_token(self):
        np.testing.assert_allclose(self.rotate("chunked", "2:2:2", (5, 2, 3)), self.CHUNKED, rtol=0, atol=1e-11)
        np.testing.assert_allclose(self.rotate("interleaved", "2:2:2", (5, 2, 3)), self.INTERLEAVED,
                                   rtol=0, atol=1e-11)

    def test_default_sections(self):
        self.assertEqual(ref.default_mrope_section(128, "chunked"), (16, 24, 24))
        self.assertEqual(ref.default_mrope_section(128, "interleaved"), (24, 20, 20))
        # Hand: chunked s1 = s2 = floor(3R/16), s0 = R/2 - s1 - s2: R 8 -> 1.5 -> 1, s0 2; R 12 -> 2.25 -> 2,
        # s0 2; R 16 -> 3, s0 2; R 32 -> 6, s0 4. Interleaved k = floor(5R/32): R 8 -> 1; 16 -> 2; 32 -> 5.
        for R, chunked, inter in ((8, (2, 1, 1), (2, 1, 1)), (12, (2, 2, 2), (4, 1, 1)),
                                  (16, (2, 3, 3), (4, 2, 2)), (32, (4, 6, 6), (6, 5, 5))):
            self.assertEqual(ref.default_mrope_section(R, "chunked"), chunked, R)
            self.assertEqual(ref.default_mrope_section(R, "interleaved"), inter, R)

    def test_components(self):
        thw = "".join("THW"[c] for c in ref.mrope_components(128, (24, 20, 20), "interleaved"))
        self.assertEqual(thw, "THW" * 20 + "TTTT")  # THW repeated to t = 59, then TTTT
        # Hand: R 16, 4:2:2. interleaved: t % 3 == 1 and t < 6 -> h (t 1, 4), t % 3 == 2 and t < 6 -> w
        # (t 2, 5), the rest t; chunked: t < 4 -> t, 4 <= t < 6 -> h, else w.
        np.testing.assert_array_equal(ref.mrope_components(16, (4, 2, 2), "interleaved"), [0, 1, 2, 0, 1, 2, 0, 0])
        np.testing.assert_array_equal(ref.mrope_components(16, (4, 2, 2), "chunked"), [0, 0, 0, 0, 1, 1, 2, 2])
        with self.assertRaises(ValueError):  # 3 s1 - 2 = 4 is not < R/2 = 4
            ref.mrope_components(8, (1, 2, 1), "interleaved")
        with self.assertRaises(ValueError):  # sums to 5, not R/2 = 4
            ref.mrope_components(8, (2, 2, 1), "chunked")

    def test_suite_fill(self):
        # Hand, N 12: gh = gw = floor(sqrt(6)) = 2, a = floor((12 - 4)/2) = 4: text 0..3 at (n, n, n); image
        # tokens 4..7 at (4, 4 + r, 4 + c) for (r, c) = (0,0) (0,1) (1,0) (1,1); text 8..11 from 4 + 2 = 6.
        np.testing.assert_array_equal(ref.mrope_pos_ids(12), [[0, 1, 2, 3, 4, 4, 4, 4, 6, 7, 8, 9],
                                                              [0, 1, 2, 3, 4, 4, 5, 5, 6, 7, 8, 9],
                                                              [0, 1, 2, 3, 4, 5, 4, 5, 6, 7, 8, 9]])
        # N 5: gh = gw = 1, a = 2: a 1 x 1 image is text again, all three rows 0..4.
        np.testing.assert_array_equal(ref.mrope_pos_ids(5), np.tile(np.arange(5), (3, 1)))

    def test_equal_rows_are_plain_rope(self):
        rng = np.random.default_rng(4)
        x = rng.standard_normal((5, 12))
        pos = np.array([0, 3, 7, 100, 2047])
        for style in ("neox", "gptj"):
            plain = ref.rope_rotate(x, pos, rope_params(rotary_dim=12, style=style), 1)
            for layout, section in (("chunked", "2:2:2"), ("interleaved", "2:2:2"), ("chunked", "6:0:0")):
                y = ref.rope_rotate(x, np.tile(pos, (3, 1)), rope_params(rotary_dim=12, style=style,
                                    positions="mrope", mrope_layout=layout, mrope_section=section), 1)
                np.testing.assert_allclose(y, plain, rtol=0, atol=1e-13)


class XPos(unittest.TestCase):
    def test_spec_facts(self):
        np.testing.assert_allclose(ref.xpos_zeta(8), [0.285714285714286, 0.464285714285714, 0.642857142857143,
                                                      0.821428571428571], rtol=1e-14)
        self.assertEqual([ref.xpos_centre(L) for L in (1, 2, 3, 4, 5, 8)], [1, 1, 2, 2, 3, 4])
        np.testing.assert_allclose(ref.xpos_factor(np.arange(4), 8, 4, 512.0, "q")[:, 0],
                                   [1.004905598587742, 1.002449798537434, 1, 0.997556188308873], rtol=1e-14)
        # The k factor at t 0 (scale base 512) passes f16's maximum just past |p - c| = 4532.
        k = ref.xpos_factor(np.array([4533, 4534]), 8, 2, 512.0, "k")[:, 0]  # L 2, c 1: p - c = 4532, 4533
        self.assertLess(k[0], 65504.0)
        self.assertGreater(k[1], 65504.0)

    def test_exact_factors_by_hand(self):
        # Hand: R 4: zeta = [(0 + 1.6)/5.6, (2 + 1.6)/5.6] = [2/7, 9/14]; L 5: c = 3; scale base 2.
        # p 5: e = (5 - 3)/2 = 1 -> q [2/7, 9/14], k [7/2, 14/9]; p 1: e = -1 -> q [7/2, 14/9].
        f = ref.xpos_factor(np.array([5, 1, 3]), 4, 5, 2.0, "q")
        np.testing.assert_allclose(f, [[2 / 7, 9 / 14], [7 / 2, 14 / 9], [1, 1]], rtol=1e-15)
        np.testing.assert_allclose(ref.xpos_factor(np.array([5]), 4, 5, 2.0, "k"), [[7 / 2, 14 / 9]], rtol=1e-15)
        # Rotation then factor: x = e_0, gptj, p 5, L 5, base 1e4: pair 0 turns by 5 rad, scaled by 2/7.
        p = rope_params(rotary_dim=4, style="gptj", xpos_scale_base=2.0)
        y = ref.rope_rotate(np.array([[1.0, 0, 0, 0]]), np.array([5]), p, 5, tensor="q")[0]
        np.testing.assert_allclose(y, [2 / 7 * math.cos(5), 2 / 7 * math.sin(5), 0, 0], rtol=0, atol=1e-16)

    def test_score_carries_relative_decay(self):
        # q at i, k at j: the score's pair t gains zeta_t^((i - j)/scale_base), whatever L (c cancels).
        p = rope_params(rotary_dim=8, style="gptj", xpos_scale_base=16.0)
        x = np.zeros((1, 8))
        x[0, 2] = 1.0  # pair 1 only
        zeta1 = ref.xpos_zeta(8)[1]
        for L, i, j in ((9, 8, 3), (40, 8, 3), (9, 2, 7)):
            q = ref.rope_rotate(x, np.array([i]), p, L, tensor="q")[0]
            k = ref.rope_rotate(x, np.array([j]), p, L, tensor="k")[0]
            th1 = 1e4 ** (-2 / 8)
            self.assertAlmostEqual(float(q @ k), math.cos((i - j) * th1) * zeta1 ** ((i - j) / 16), places=14)

    def test_refused_with_scaling_or_mrope(self):
        with self.assertRaises(ValueError):
            ref.rope_rotate(np.ones((1, 8)), np.array([1]), rope_params(scaling="linear", xpos_scale_base=512.0), 2)


class FairseqSinusoid(unittest.TestCase):
    def test_by_hand(self):
        # Hand, d 5: h = 2, w = [1, base^(-1/(h-1))] = [1, 1e-4]; p 0 with padding_idx 1 reads row 2:
        # [sin 2, sin 2e-4, cos 2, cos 2e-4, 0] (odd d: last column 0).
        pe = ref.sinusoid([0], 5, 1e4, "fairseq", 1)[0]
        np.testing.assert_allclose(pe, [math.sin(2), math.sin(2e-4), math.cos(2), math.cos(2e-4), 0], rtol=0,
                                   atol=3e-16)
        self.assertEqual(pe[4], 0.0)
        # w_0 = 1, w_{h-1} = 1/base; padding_idx shifts rows: p 3 with padding_idx 0 = p 0 with padding_idx 3.
        pe = ref.sinusoid([3], 16, 1e4, "fairseq", 0)[0]
        np.testing.assert_allclose(pe, ref.sinusoid([0], 16, 1e4, "fairseq", 3)[0], rtol=0, atol=0)
        self.assertAlmostEqual(pe[0], math.sin(4))
        self.assertAlmostEqual(pe[7], math.sin(4e-4))
        with self.assertRaises(ValueError):
            ref.sinusoid([0], 3, 1e4, "fairseq", 1)  # h = 1 < 2


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



class Kerple(unittest.TestCase):
    """tests/data/kerple_facts.py's known answers (plain-Python float64 loops) against spec_ref's NumPy form."""
    Q = [[[0.5, -1.0], [0.25, 0.75], [-0.5, 0.5]], [[1.0, 0.25], [-0.75, -0.25], [0.0, 1.0]]]
    K = [[1.0, 0.0], [0.5, 0.5], [-1.0, 0.25], [0.0, -0.5], [0.75, 1.0]]
    V = [[1.0, 2.0], [-1.0, 0.5], [0.25, -2.0], [3.0, 1.0], [-0.5, -1.5]]
    FACTS = {"log": ([0.5, 1.75], [0.25, 0.0625],
                     [0.22409355673931164, 0.60923171639631868, 0.61134922659175528, 0.39079700081560137,
                      0.40334648617118157, -0.47165690207791505, 0.10661347725038982, 0.8330185221060521,
                      0.9846348041585985, -0.18963119193084227, 0.13908317520051658, -0.46110338924559596]),
             "power": ([0.5, 0.125], [1.5, 0.0625],
                       [-0.010342271111286324, -0.15956913612508852, 1.2280450193097348, -0.024019706792935133,
                        0.48957932123729175, -0.88273722988995384, 0.1460776676699562, 0.87662107344764673,
                        0.9661284031539068, -0.1202796065096733, 0.12621228075605526, -0.36969690584290571])}

    def test_known_answers(self):
        for kind, (r1, r2, o) in self.FACTS.items():
            t = {"q": np.array([self.Q]), "k": np.array([[self.K]]), "v": np.array([[self.V]]),
                 "r1": np.array(r1), "r2": np.array(r2)}
            got = ref.attn_kerple(t, {"scale": 1 / math.sqrt(2), "causal": True, "kind": kind})["o"]
            np.testing.assert_allclose(got.ravel(), o, rtol=0, atol=1e-14, err_msg=kind)

    def test_power_zero_distance_is_zero_and_r2_one_is_alibi(self):
        d = np.arange(6)[None, :]
        b = ref.kerple_bias("power", [0.25], [0.01], d)
        self.assertEqual(b[0, 0, 0], 0.0)  # 0^r2 = 0 even for r2 near 0 (0^0.01 -> 0, not 1)
        np.testing.assert_allclose(ref.kerple_bias("power", [0.25], [1.0], d)[0], -0.25 * d, rtol=1e-15)
        np.testing.assert_allclose(ref.kerple_bias("log", [2.0], [1.0], d)[0], -2 * np.log(1 + d), rtol=1e-15)


class Fire(unittest.TestCase):
    """tests/data/fire_facts.py's known answers (plain-Python float64 loops) against spec_ref's NumPy form."""

    def inputs(self):
        return {"q": np.array([Kerple.Q]), "k": np.array([[Kerple.K]]), "v": np.array([[Kerple.V]]),
                "w1": np.array([1.0, -0.5, 0.25]), "b1": np.array([0.0, 0.5, -0.125]),
                "w2": np.array([[0.5, -1.0, 2.0], [-0.25, 0.75, 1.0]]), "b2": np.array([0.125, -0.5])}

    def test_known_answers(self):
        params = {"scale": 1 / math.sqrt(2), "causal": True, "mlp_width": 3, "fire_c": 0.5, "fire_L": 3, "eps": 1e-6}
        t = self.inputs()
        o = [0.42908112317601294, 1.1932049266022122, 0.34334208473699152, 0.79460693806420912,
             0.33968124717661319, -0.038440039106474921, 0.097519083429617778, 0.74096629618260723,
             1.1037494726720845, -0.13552889001712723, 0.11201813256563105, -0.50063157800085845]
        np.testing.assert_allclose(ref.attn_fire(t, params)["o"].ravel(), o, rtol=0, atol=1e-14)
        b = ref.fire_bias(t, params, 3, 5)
        np.testing.assert_allclose(b[0, 2], [0.87499863464240302, 0.62606451195171076, 0.32139376891245375,
                                             -0.0059300895133673481, -0.375], rtol=0, atol=1e-15)
        np.testing.assert_allclose(b[1, 0, :3], [-0.53367623942030584, -0.40156660401079253, -0.125],
                                   rtol=0, atol=1e-15)

    def test_rows_below_L_share_the_normaliser(self):
        # max(i', L): below L the bias depends on the distance only (the kernels' per-distance table).
        params = {"mlp_width": 3, "fire_c": 0.1, "fire_L": 512, "eps": 1e-6}
        b = ref.fire_bias(self.inputs(), params, 40, 40)  # i' = 0..39 < L
        for d in range(5):
            diag = [b[0, i, i - d] for i in range(d, 40)]
            np.testing.assert_allclose(diag, diag[0], rtol=1e-15)

class Cope(unittest.TestCase):
    """tests/data/cope_facts.py's known answers (plain-Python float64 loops) against spec_ref's NumPy form."""

    def inputs(self):
        return {"q": np.array([Kerple.Q]), "k": np.array([[Kerple.K]]), "v": np.array([[Kerple.V]]),
                "pos_emb": np.array([[0.5, -0.25], [-1.0, 0.75], [0.25, 1.5]])}

    O = {(True, True): [0.154860340010331, -0.063185965254513796, 0.41124959155854962, 0.84349765322554782,
                        0.55051337622699803, -0.31580655735635815, 0.4595335466547929, 1.0743920884060276,
                        0.86793697173296747, -0.53914919034925435, 0.11802406843986588, 0.052336097252232545],
         (True, False): [0.17723482503464563, 0.18965226359726392, 0.42962841025801751, 0.72714700246514363,
                         0.50576939625346651, -0.33464957170294041, 0.37869395210647283, 1.0344660939005501,
                         0.87722769121768496, -0.43447111145834039, 0.13453209881247741, -0.048395867492343134],
         (False, True): [0.69945915970264505, 0.07536954561106958, 0.14301729025855764, 0.24174785649678393,
                         0.55051337622699803, -0.31580655735635815, 0.20232300607386822, 0.72866461918780356,
                         1.1094019315182064, -0.31382183676552833, 0.11802406843986588, 0.052336097252232545],
         (False, False): [0.79706969367506864, 0.23179562102771895, 0.16638572694272172, 0.13175287930400956,
                          0.50576939625346651, -0.33464957170294041, 0.23058450951286116, 0.59582456325448785,
                          0.98894251279579559, -0.33459758294206587, 0.13453209881247741, -0.048395867492343134]}

    def test_known_answers(self):
        for (causal, nodiv), o in self.O.items():
            params = {"scale": 1 / math.sqrt(2), "causal": causal, "cope_nodiv": nodiv}
            np.testing.assert_allclose(ref.attn_cope(self.inputs(), params)["o"].ravel(), o, rtol=0, atol=1e-14,
                                       err_msg=f"causal={causal} nodiv={nodiv}")

    def test_positions_clamp_and_interpolate(self):
        # Row i' = 4 of head 0, causal: the two oldest keys are clamped at npos - 1 = 2, so their e is
        # q.pos_emb[2] exactly (0.625); the others interpolate.
        s = ref.cope_scores(self.inputs(), {"scale": 1 / math.sqrt(2), "causal": True, "cope_nodiv": True})
        qk = np.array([-0.5, 0.0, 0.625, -0.25, 0.125])  # q = (-0.5, 0.5) against K
        e = s[0, 0, 2] - qk / math.sqrt(2)
        np.testing.assert_allclose(e, [0.625, 0.625, 0.72831878015386953, 0.8475040858360543,
                                       0.27760339002258677], rtol=0, atol=1e-15)


if __name__ == "__main__":
    unittest.main(verbosity=1)
