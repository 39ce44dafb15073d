#!/usr/bin/env python3
"""Known answers for attn.kerple, in float64 from encodings.md section 3 alone
(not from pebench's code): tests/attn_kerple_test.cc holds the printed values.

    python3 tests/data/kerple_facts.py

Case: B 1, H 2, Hkv 1 (GQA), N 3, M 5 (queries at i' = 2, 3, 4), D 2,
scale 1/sqrt(2), causal; q, k, v and r1, r2 exact in f16 and f32."""
import math

Q = [[[0.5, -1.0], [0.25, 0.75], [-0.5, 0.5]],   # head 0, rows i = 0..2
     [[1.0, 0.25], [-0.75, -0.25], [0.0, 1.0]]]  # head 1
K = [[1.0, 0.0], [0.5, 0.5], [-1.0, 0.25], [0.0, -0.5], [0.75, 1.0]]  # kv head 0, j = 0..4
V = [[1.0, 2.0], [-1.0, 0.5], [0.25, -2.0], [3.0, 1.0], [-0.5, -1.5]]
R = {"log": ([0.5, 1.75], [0.25, 0.0625]), "power": ([0.5, 0.125], [1.5, 0.0625])}
N, M, D = 3, 5, 2


def bias(kind, r1, r2, d):
    if kind == "log":
        return -r1 * math.log(1 + r2 * d)
    return 0.0 if d == 0 else -r1 * d ** r2  # 0^r2 = 0


def attend(kind):
    r1, r2 = R[kind]
    out = []
    for h in range(2):
        for i in range(N):
            ip = i + M - N
            s = [Q[h][i][0] * K[j][0] / math.sqrt(D) + Q[h][i][1] * K[j][1] / math.sqrt(D)
                 + bias(kind, r1[h], r2[h], ip - j) for j in range(ip + 1)]
            mx = max(s)
            w = [math.exp(x - mx) for x in s]
            out.append([sum(w[j] * V[j][c] for j in range(ip + 1)) / sum(w) for c in range(D)])
    return out


for kind in ("log", "power"):
    r1, r2 = R[kind]
    print(kind, "bias h0 d=0..4:", ", ".join(f"{bias(kind, r1[0], r2[0], d):.17g}" for d in range(5)))
    print(kind, "o [h][i][c]:", ", ".join(f"{x:.17g}" for row in attend(kind) for x in row))
