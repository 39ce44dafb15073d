#!/usr/bin/env python3
"""Known answers for attn.fire, in float64 from encodings.md section 3 alone
(not from pebench's code): tests/attn_fire_test.cc holds the printed values.

    python3 tests/data/fire_facts.py

Case: B 1, H 2, Hkv 1 (GQA), N 3, M 5 (queries at i' = 2, 3, 4), D 2,
scale 1/sqrt(2), causal; mlp_width 3, fire_c 0.5, fire_L 3 (row i' = 2 is
below L and takes the normaliser ln(1 + c L); rows 3 and 4 their own),
eps 1e-6. The hidden units switch on at u > 0, u < 1 and u > 0.5."""
import math

Q = [[[0.5, -1.0], [0.25, 0.75], [-0.5, 0.5]],
     [[1.0, 0.25], [-0.75, -0.25], [0.0, 1.0]]]
K = [[1.0, 0.0], [0.5, 0.5], [-1.0, 0.25], [0.0, -0.5], [0.75, 1.0]]
V = [[1.0, 2.0], [-1.0, 0.5], [0.25, -2.0], [3.0, 1.0], [-0.5, -1.5]]
W1 = [1.0, -0.5, 0.25]
B1 = [0.0, 0.5, -0.125]
W2 = [[0.5, -1.0, 2.0], [-0.25, 0.75, 1.0]]
B2 = [0.125, -0.5]
C, L, EPS = 0.5, 3, 1e-6
N, M, D = 3, 5, 2


def bias(h, ip, j):
    u = math.log(1 + C * (ip - j)) / (math.log(1 + C * max(ip, L)) + EPS)
    return sum(W2[h][k] * max(W1[k] * u + B1[k], 0.0) for k in range(3)) + B2[h]


out = []
for h in range(2):
    for i in range(N):
        ip = i + M - N
        s = [(Q[h][i][0] * K[j][0] + Q[h][i][1] * K[j][1]) / math.sqrt(D) + bias(h, ip, j) for j in range(ip + 1)]
        mx = max(s)
        w = [math.exp(x - mx) for x in s]
        out.append([sum(w[j] * V[j][c] for j in range(ip + 1)) / sum(w) for c in range(D)])
print("bias h0 i'=4, j=0..4:", ", ".join(f"{bias(0, 4, j):.17g}" for j in range(5)))
print("bias h1 i'=2, j=0..2:", ", ".join(f"{bias(1, 2, j):.17g}" for j in range(3)))
print("o [h][i][c]:", ", ".join(f"{x:.17g}" for row in out for x in row))
