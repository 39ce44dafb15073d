#!/usr/bin/env python3
"""Known answers for attn.cope, in float64 from encodings.md section 3 alone
(not from pebench's code): tests/attn_cope_test.cc holds the printed values.

    python3 tests/data/cope_facts.py

Case: B 1, H 2, Hkv 1 (GQA), N 3, M 5 (queries at i' = 2, 3, 4), D 2,
scale 1/sqrt(2); npos 3, so sums of more than two gates reach the clamp at
npos - 1 = 2 (row i' = 4 sums five gates, row 2 three), and positions
below it interpolate between pos_emb rows f and f + 1. Printed for causal
and not (non-causal sums to the last key), and cope_nodiv true and false."""
import math

Q = [[[0.5, -1.0], [0.25, 0.75], [-0.5, 0.5]],
     [[1.0, 0.25], [-0.75, -0.25], [0.0, 1.0]]]
K = [[1.0, 0.0], [0.5, 0.5], [-1.0, 0.25], [0.0, -0.5], [0.75, 1.0]]
V = [[1.0, 2.0], [-1.0, 0.5], [0.25, -2.0], [3.0, 1.0], [-0.5, -1.5]]
POS = [[0.5, -0.25], [-1.0, 0.75], [0.25, 1.5]]  # pos_emb [npos, D]
N, M, D, NPOS = 3, 5, 2, 3
SCALE = 1 / math.sqrt(D)


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def row(h, i, causal, nodiv):
    """(positions p_ij, e_ij, output o_i) of query row i of head h."""
    ip = i + M - N
    q = Q[h][i]
    last = ip if causal else M - 1
    keys = range(last + 1)
    qk = {j: dot(q, K[j]) for j in keys}
    g = {j: 1 / (1 + math.exp(-SCALE * qk[j])) for j in keys}
    p = {j: min(sum(g[t] for t in range(j, last + 1)), NPOS - 1) for j in keys}
    e = {}
    for j in keys:
        f = math.floor(p[j])
        w = p[j] - f
        e[j] = (1 - w) * dot(q, POS[f]) + w * dot(q, POS[min(f + 1, NPOS - 1)])
    s = {j: SCALE * qk[j] + e[j] if nodiv else SCALE * (qk[j] + e[j]) for j in keys}
    mx = max(s.values())
    wt = {j: math.exp(s[j] - mx) for j in keys}
    tot = sum(wt.values())
    return p, e, [sum(wt[j] * V[j][c] for j in keys) / tot for c in range(D)]


def fmt(xs):
    return ", ".join(f"{x:.17g}" for x in xs)


p, e, _ = row(0, 2, True, True)
print("causal p h0 i'=4, j=0..4:", fmt(p.values()))
print("causal e h0 i'=4, j=0..4:", fmt(e.values()))
p, e, _ = row(1, 0, True, True)
print("causal p h1 i'=2, j=0..2:", fmt(p.values()))
p, e, _ = row(1, 0, False, True)
print("noncausal p h1 i'=2, j=0..4:", fmt(p.values()))
for causal in (True, False):
    for nodiv in (True, False):
        out = [x for h in range(2) for i in range(N) for x in row(h, i, causal, nodiv)[2]]
        print(f"o causal={causal} nodiv={nodiv} [h][i][c]:", fmt(out))
