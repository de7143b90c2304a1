#!/usr/bin/env python3
"""Winograd F(4x4,3x3) matrices for any interpolation points, and their float32 error.

Toom-Cook with five finite points and infinity: A^T's rows are the points' powers, G holds the
Lagrange weights, and B^T is solved exactly (fractions) from the 72 equations that make
A^T[(G g) .* (B^T d)] the 3-tap correlation of d with g. The error is an approximate float32 simulation of
the three steps against float64, relative L2 over random tiles: U rounded from float64 as the host
makes it; in B^T d B and A^T M A each product rounded and each row's sum rounded once; M summed
over the channels in float32 one addition at a time.

  python3 scripts/bench/winograd_points.py            # Lavin's points, the chosen ones, direct
  python3 scripts/bench/winograd_points.py --search   # 0, +-1 and every pair of 16 more points
  python3 scripts/bench/winograd_points.py --print 0,1,-1,-2,1/2
  python3 scripts/bench/winograd_points.py --float16  # the matrix units' float16 schemes

bench/DECISIONS.md#winograd-points (session 22, run 7): Lavin's 0, +-1, +-2 give 1.6e-6 over 64 channels,
0, 1, -1, -2, 1/2 give 1.0e-6 (direct summation 0.44e-6); glsl/winograd.glsl uses the latter.

--float16 (bench/DECISIONS.md#winograd-matrix-scheme): a layer as the matrix units run it, against float64 of the unrounded data:
the direct convolution with float16 inputs and weights, float32 sums and a float16 output, and
Winograd with float16 inputs, U from float64 rounded to float16, V computed in float32 and stored
in float16, M summed in float32, Y rounded to float16. Over 64 channels: direct 3.6e-4; F(2x2,3x3)
5.9e-4 (7.0e-4 with M stored in float16); F(4x4,3x3) 2.0e-3 at 0, 1, -1, -2, 1/2 and 2.8e-3 at
Lavin's points (1.4e-3 even with V in float32: U's float16 rounding). F(2x2) it is.
"""
import argparse
import itertools
import random
import struct
from fractions import Fraction as F


def solve(Aeq, b):
    """Exact Gauss-Jordan elimination; a solution of the consistent system, or None."""
    n = len(Aeq[0]); rows = [r[:] + [bb] for r, bb in zip(Aeq, b)]
    piv = []; r = 0
    for c in range(n):
        p = next((i for i in range(r, len(rows)) if rows[i][c] != 0), None)
        if p is None: continue
        rows[r], rows[p] = rows[p], rows[r]
        inv = 1 / rows[r][c]; rows[r] = [v * inv for v in rows[r]]
        for i in range(len(rows)):
            if i != r and rows[i][c] != 0:
                f = rows[i][c]; rows[i] = [a - f * bb for a, bb in zip(rows[i], rows[r])]
        piv.append(c); r += 1
    for i in range(r, len(rows)):
        if rows[i][-1] != 0: return None
    x = [F(0)] * n
    for i, c in enumerate(piv): x[c] = rows[i][-1]
    return x

def matrices(points, m=4, r=3):
    """(A^T, G, B^T) of F(m, r) for the finite `points` and infinity, or None."""
    n = m + r - 1
    pts = [F(p) for p in points]
    AT = [[pts[j] ** i for j in range(n - 1)] + [F(1 if i == m - 1 else 0)] for i in range(m)]
    G = []
    for j in range(n - 1):
        f = F(1)
        for l in range(n - 1):
            if l != j: f *= pts[j] - pts[l]
        G.append([pts[j] ** k / f for k in range(r)])
    G.append([F(1 if k == r - 1 else 0) for k in range(r)])
    # unknown BT[j][t]; equations for i, k, t
    eqs, rhs = [], []
    for i in range(m):
        for k in range(r):
            for t in range(n):
                row = [F(0)] * (n * n)
                for j in range(n):
                    row[j * n + t] = AT[i][j] * G[j][k]
                eqs.append(row); rhs.append(F(1 if t == i + k else 0))
    x = solve(eqs, rhs)
    if x is None: return None
    BT = [[x[j * n + t] for t in range(n)] for j in range(n)]
    return AT, G, BT

def f32(x):
    """x rounded to float32."""
    return struct.unpack("f", struct.pack("f", x))[0]


def error(mats, channels=64, tiles=60, seed=1):
    """Relative L2 of the three steps in float32 against float64, over random 6x6 tiles."""
    AT, G, BT = ([[float(v) for v in row] for row in m] for m in mats)
    rnd = random.Random(seed)
    num = den = 0.0
    for _ in range(tiles):
        M = [[0.0] * 6 for _ in range(6)]
        ref = [[0.0] * 4 for _ in range(4)]
        for c in range(channels):
            d = [[f32(rnd.uniform(-1, 1)) for _ in range(6)] for _ in range(6)]
            g = [[f32(rnd.uniform(-1, 1) / 3) for _ in range(3)] for _ in range(3)]
            # U in double then rounded (host does that)
            Gg = [[sum(G[a][k] * g[k][b] for k in range(3)) for b in range(3)] for a in range(6)]
            U = [[f32(sum(Gg[a][k] * G[b][k] for k in range(3))) for b in range(6)] for a in range(6)]
            # V = BT d B in float32, columns then rows
            t = [[f32(sum(f32(BT[a][k] * d[k][x]) for k in range(6))) for x in range(6)] for a in range(6)]
            V = [[f32(sum(f32(BT[b][k] * t[a][k]) for k in range(6))) for b in range(6)] for a in range(6)]
            for a in range(6):
                for b in range(6):
                    M[a][b] = f32(M[a][b] + f32(U[a][b] * V[a][b]))
            for i in range(4):
                for j in range(4):
                    ref[i][j] += sum(d[i + a][j + b] * g[a][b] for a in range(3) for b in range(3))
        t2 = [[f32(sum(f32(AT[i][k] * M[k][x]) for k in range(6))) for x in range(6)] for i in range(4)]
        Y = [[f32(sum(f32(AT[j][k] * t2[i][k]) for k in range(6))) for j in range(4)] for i in range(4)]
        for i in range(4):
            for j in range(4):
                num += (Y[i][j] - ref[i][j]) ** 2; den += ref[i][j] ** 2
    return (num / den) ** 0.5


def direct(channels=64, tiles=200, seed=5):
    """The same data summed directly in float32 (a product and an addition rounded each)."""
    rnd = random.Random(seed)
    num = den = 0.0
    for _ in range(tiles):
        acc = [[0.0] * 4 for _ in range(4)]
        ref = [[0.0] * 4 for _ in range(4)]
        for _c in range(channels):
            d = [[f32(rnd.uniform(-1, 1)) for _ in range(6)] for _ in range(6)]
            g = [[f32(rnd.uniform(-1, 1) / 3) for _ in range(3)] for _ in range(3)]
            for i in range(4):
                for j in range(4):
                    for a in range(3):
                        for b in range(3):
                            acc[i][j] = f32(acc[i][j] + f32(d[i + a][j + b] * g[a][b]))
                    ref[i][j] += sum(d[i + a][j + b] * g[a][b] for a in range(3) for b in range(3))
        for i in range(4):
            for j in range(4):
                num += (acc[i][j] - ref[i][j]) ** 2
                den += ref[i][j] ** 2
    return (num / den) ** 0.5


def h16(x):
    """x rounded to float16."""
    return struct.unpack("e", struct.pack("e", x))[0]


F2 = ([[1, 1, 1, 0], [0, 1, -1, -1]],
      [[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]],
      [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]])


def half_error(mats, m, channels=64, tiles=40, seed=5, v_round=h16, m_round=lambda x: x):
    """(direct, Winograd) relative L2 in float16 as the matrix units run a layer (--float16)."""
    AT, G, BT = ([[float(v) for v in row] for row in M] for M in mats)
    rnd = random.Random(seed); n = m + 2
    nd = nw = den = 0.0
    for _ in range(tiles):
        Mx = [[0.0] * n for _ in range(n)]
        ref = [[0.0] * m for _ in range(m)]; acc = [[0.0] * m for _ in range(m)]
        for _c in range(channels):
            d = [[rnd.uniform(-1, 1) for _ in range(n)] for _ in range(n)]
            g = [[rnd.uniform(-1, 1) / 3 for _ in range(3)] for _ in range(3)]
            dh = [[h16(v) for v in r] for r in d]; gh = [[h16(v) for v in r] for r in g]
            for i in range(m):
                for j in range(m):
                    ref[i][j] += sum(d[i + a][j + b] * g[a][b] for a in range(3) for b in range(3))
                    acc[i][j] = f32(acc[i][j] + sum(dh[i + a][j + b] * gh[a][b]
                                                    for a in range(3) for b in range(3)))
            Gg = [[sum(G[a][k] * g[k][b] for k in range(3)) for b in range(3)] for a in range(n)]
            U = [[h16(sum(Gg[a][k] * G[b][k] for k in range(3))) for b in range(n)] for a in range(n)]
            t = [[f32(sum(BT[a][k] * dh[k][x] for k in range(n))) for x in range(n)] for a in range(n)]
            V = [[v_round(sum(BT[b][k] * t[a][k] for k in range(n))) for b in range(n)] for a in range(n)]
            for a in range(n):
                for b in range(n):
                    Mx[a][b] = f32(Mx[a][b] + U[a][b] * V[a][b])
        t2 = [[f32(sum(AT[i][k] * m_round(Mx[k][x]) for k in range(n))) for x in range(n)]
              for i in range(m)]
        Y = [[h16(sum(AT[j][k] * t2[i][k] for k in range(n))) for j in range(m)] for i in range(m)]
        for i in range(m):
            for j in range(m):
                nd += (h16(acc[i][j]) - ref[i][j]) ** 2
                nw += (Y[i][j] - ref[i][j]) ** 2; den += ref[i][j] ** 2
    return (nd / den) ** 0.5, (nw / den) ** 0.5


def parse(text):
    return [F(p) for p in text.split(",")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--search", action="store_true")
    ap.add_argument("--print", dest="show")
    ap.add_argument("--float16", action="store_true")
    args = ap.parse_args()
    if args.float16:
        for label, mats, m, kw in (
                ("F(2x2,3x3)", F2, 2, {}),
                ("F(2x2,3x3), M in float16", F2, 2, {"m_round": h16}),
                ("F(4x4,3x3) 0,1,-1,-2,1/2", matrices(parse("0,1,-1,-2,1/2")), 4, {}),
                ("F(4x4,3x3) Lavin's", matrices(parse("0,1,-1,2,-2")), 4, {}),
                ("F(4x4,3x3), V in float32", matrices(parse("0,1,-1,-2,1/2")), 4, {"v_round": f32})):
            direct_error, winograd_error = half_error(mats, m, **kw)
            print(f"{label:28s} direct {direct_error:.3e}  winograd {winograd_error:.3e}")
        return
    if args.show:
        for label, m in zip(("A^T", "G", "B^T"), matrices(parse(args.show))):
            print(label)
            for row in m:
                print("  " + " ".join(f"{str(v):>6}" for v in row))
        return
    if args.search:
        more = [F(2), F(-2), F(1, 2), F(-1, 2), F(3, 2), F(-3, 2), F(2, 3), F(-2, 3), F(1, 4),
                F(-1, 4), F(4), F(-4), F(3), F(-3), F(1, 3), F(-1, 3)]
        found = []
        for a, b in itertools.combinations(more, 2):
            m = matrices([0, 1, -1, a, b])
            if m:
                found.append((error(m, tiles=30, seed=3), f"0,1,-1,{a},{b}"))
        for e, points in sorted(found)[:10]:
            print(f"{points:20s} {e:.3e}")
        return
    print(f"direct               {direct():.3e}")
    for points in ("0,1,-1,2,-2", "0,1,-1,-2,1/2"):
        print(f"{points:20s} {error(matrices(parse(points)), tiles=200, seed=5):.3e}")


if __name__ == "__main__":
    main()
