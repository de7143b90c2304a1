#!/usr/bin/env python3
"""Refit the convolution selector's cost model (glsl/convolution_tiles.h) from committed
per-shape forced timings, without a GPU.

The model (engine/src/kernels/convolution.cpp, gemmShader and groupedTile): a matrix-unit tile
costs waves x stages x nanosecondsPerStage per dispatch, where waves = ceil(tiles / (SMs x
residentPerMultiprocessor)) and stages = ceil(K / tile depth); the split-k shaders take layers
with fewer than 0.6 tiles of 32x64 per multiprocessor. This script

  1. joins the forced timings of every tile over the runs given (later runs' columns scaled per
     shape by a column both runs timed, so that one run's clocks do not bias a tile),
  2. fits each tile's (resident, nanoseconds) to those timings (weighted least squares in log
     time, weights = time: the costly shapes matter),
  3. reports ("current": the constants glsl/convolution_tiles.h holds now), per batch and network, the convolution time (sum of time x uses, measured)
     of the current model's choice, of the refitted model's choice, and of the oracle (the best
     measured configuration per shape), and prints the refitted table rows.

Usage: scripts/bench/fit_cost_model.py [--sms 132] [--layers 2048] [--selection] [--alone]
  --selection  also refine the fitted nanoseconds by coordinate descent on the selection's own
               total (the choice, not the fit, is what costs time); reported separately.
  --alone      fit the latency model of layers with few tiles instead (ALONE_RUN below).
Inputs are the committed per-shape runs named in RUNS below. Their times are per dispatch, one
after another: where the layer limit splits a batch, a Graph runs the pieces side by side and the
selector chooses for that (choice_cost; bench/NOTES.md, 2026-11-27), so the totals reported for
those shapes are the serial ones (conv_shapes.py --pieces measures side by side).
"""
import argparse
import json
import math
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RES = os.path.join(ROOT, "bench", "results")
# (file, columns to take; the first is the per-shape anchor joined with earlier runs)
RUNS = [
    # The epilogue of convolution_tiled became a loop (2026-11-26): every tile's time changed,
    # so the tiled columns of the runs before (2026-11-24-h100-conv*/) no longer describe the
    # shader; 2026-11-26-h200-epilogue/refit/ forced every dense tile and the split-k shaders on
    # every shape (H200). Every tile forced again after the im2col fetch remap and the read-ahead
    # epilogue (session 17) changed the tiles' times (H200, 2026-11-28, session 18); the constants
    # in convolution_tiles.h are this run's --selection fit (session 19, measured on networks in
    # bench/results/2026-11-27-h200-fc-batch/). Its shapes' pieces were timed each alone.
    ("2026-11-28-h200-splitk/refit/conv_shapes.json", None),
]
SPLITK = "legacy"  # run 4's legacy column at layers below the tile threshold: the split-k choice


def tiles_from_header():
    text = open(os.path.join(ROOT, "glsl", "convolution_tiles.h")).read()
    tiles = {}
    for m in re.finditer(r'\{"([0-9a-z]+)",\s*([^}]*)\}', text):
        v = [int(x) for x in m.group(2).split(",") if x.strip()]
        if len(v) < 7:  # kFullyConnectedMatrixTiles' entries, not convolution tiles
            continue
        wm, wn, fm, fn, ks, res, ns = v[:7]
        dense_waves = v[9] if len(v) > 9 else 0  # MatrixTile::denseWaves
        tiles[m.group(1)] = dict(rows=wm * fm * 16, cols=wn * fn * 16, depth=16 * ks, res=res, ns=ns,
                                 dense_waves=dense_waves,
                                 threads=32 * wm * wn,
                                 smem=2 * (wm * fm * 16 * (ks * 32 + 16) + ks * 16 * (wn * fn * 32 + 16)) +
                                 wm * wn * 16 * 20 * 4)
    return tiles


def out_size(x, k, s, p, d):
    return (x + 2 * p - d * (k - 1) - 1) // s + 1


class Shape:
    def __init__(self, rec, batch, layers):
        c, h, w, k, kh, kw, sh, sw, ph, pw, dh, dw, g = rec["key"]
        self.desc, self.g, self.c, self.k = rec["desc"], g, c, k
        self.nets = {n.split(":")[0]: int(n.split(":")[1]) for n in rec["nets"].split(",") if n}
        self.count = rec["count"]
        self.oh, self.ow = out_size(h, kh, sh, ph, dh), out_size(w, kw, sw, pw, dw)
        chunk = min(batch, layers // ((c + 3) // 4), layers // ((k + 3) // 4))
        self.chunks = [chunk] * (batch // chunk) + ([batch % chunk] if batch % chunk else [])
        self.depthwise = g > 1 and g == c and g == k
        self.grouped = g > 1 and not self.depthwise
        if self.grouped:
            self.K = kh * kw * (c // g)
            self.cols = (k // g + 15) // 16 * 16
        else:
            self.K = kh * kw * ((c + 3) // 4) * 4
            self.cols = (k + 3) // 4 * 4
        self.tiled = (not self.grouped or (k // g >= 8 and (c // g) % 4 == 0)) and not self.depthwise
        self.times = {}

    def fits(self, t):
        return not self.grouped or self.cols % t["cols"] == 0

    def cost(self, t, res=None, ns=None, sms=132):
        res = t["res"] if res is None else res
        ns = t["ns"] if ns is None else ns
        total = 0.0
        for n in self.chunks:
            tiles = self.piece_tiles(t, n)
            total += -(-tiles // (sms * res)) * -(-self.K // t["depth"]) * ns
        return total

    def piece_tiles(self, t, images):
        rows = self.ow * self.oh * images
        if self.grouped:
            return -(-rows // t["rows"]) * (self.cols // t["cols"]) * self.g
        return -(-rows // t["rows"]) * -(-self.cols // t["cols"])

    def tiles(self, t):
        # Every piece of the batch side by side (imagesSideBySide), as gemmShader counts them.
        return self.piece_tiles(t, self.chunks[0]) * len(self.chunks)

    def choice_cost(self, t, res, ns, sms=132):
        # gemmShader's comparison: a batch's pieces run side by side (imagesSideBySide), their
        # tiles sharing the device, where cost() sums them one after another as they were timed.
        return -(-self.tiles(t) // (sms * res)) * -(-self.K // t["depth"]) * ns

    def splitk(self, sms):
        # gemmShader: below 0.6 tiles of 32x64 per multiprocessor, every piece side by side
        # counted (first dispatch decides).
        if self.grouped:
            return False
        rows = self.ow * self.oh * self.chunks[0]
        tiles = -(-rows // 32) * -(-((self.k + 3) // 4 * 4) // 64) * len(self.chunks)
        return 5 * tiles < 3 * sms


def load(batch, layers, tiles):
    shapes = {}
    for path, cols in RUNS:
        d = json.load(open(os.path.join(RES, path)))
        run = d["runs"].get(batch)
        if run is None:
            continue
        for rec in run:
            key = tuple(rec["key"])
            new = key not in shapes
            s = shapes.setdefault(key, Shape(rec, int(batch.split("_b")[1]), layers))
            got = {}
            for name in (cols or [c[3:] for c in rec if c.startswith("vk_")]):
                if "vk_" + name not in rec or name in ("auto", "best"):
                    continue
                cfg = rec.get("cfg_" + name, "")
                # A forced tile that does not apply falls back: keep only what really ran.
                m = re.search(r"\((?:grouped )?([^()]*)\)\s*$", cfg)
                ran = m.group(1) if m else name
                if name in tiles and ran != name:
                    continue
                got[name if name != "legacy" else SPLITK] = rec["vk_" + name]
            if "vk_legacy" not in rec:
                # No legacy column: the split-k choice is the selector's own where it made one,
                # else the better of the two split-k shaders timed.
                if "matrix_" in rec.get("cfg_auto", ""):
                    got[SPLITK] = rec["vk_auto"]
                elif rec.get("vk_matrix_small") and rec.get("vk_matrix_medium"):
                    got[SPLITK] = min(rec["vk_matrix_small"], rec["vk_matrix_medium"])
            if not new and cols:
                anchor = cols[0]
                if anchor in got and anchor in s.times and got[anchor] > 0:
                    scale = s.times[anchor] / got[anchor]
                    got = {k: v * scale for k, v in got.items() if k != anchor}
                else:
                    got = {}  # no common column: different clocks, not joined
            for k, v in got.items():
                s.times.setdefault(k, v)
    return list(shapes.values())


def choose(s, tiles, params, sms, narrow_dense=True):
    """The configuration the model picks, as gemmShader / groupedTile do (narrow_dense=False:
    as the selector before the refit, which kept tiles narrower than 64 for groups)."""
    if s.depthwise or not s.tiled:
        return SPLITK
    if s.splitk(sms):
        return SPLITK
    best, bc = None, 0
    for name, t in tiles.items():
        res, ns = params[name]
        if not ns or not s.fits(t) or name not in s.times:
            continue
        if not narrow_dense and not s.grouped and t["cols"] < 64:
            continue
        if t["dense_waves"] and (s.grouped or s.tiles(t) < t["dense_waves"] * sms * res):
            continue
        c = s.choice_cost(t, res, ns, sms)
        if best is None or c < bc:
            best, bc = name, c
    return best or SPLITK


def measured(s, name):
    return s.times.get(name, s.times.get(SPLITK, 0.0))


def totals(shapes, tiles, params, sms, oracle=False, narrow_dense=True):
    per = {}
    for s in shapes:
        if oracle:
            t = min(v for k, v in s.times.items() if k == SPLITK or k in tiles) if s.times else 0
        else:
            t = measured(s, choose(s, tiles, params, sms, narrow_dense))
        for net, n in s.nets.items():
            per[net] = per.get(net, 0.0) + t * n
        per["all"] = per.get("all", 0.0) + t * s.count
    return per


def fit(shapes, tiles, sms, weight):
    params = {}
    for name, t in tiles.items():
        pts = [s for s in shapes if name in s.times and s.fits(t) and s.tiled and not s.splitk(sms)]
        if len(pts) < 5:
            params[name] = (t["res"], 0)
            continue
        by_threads = 2048 // t["threads"]
        by_smem = (228 * 1024) // (t["smem"] + 1024)
        best = None
        for res in range(1, min(8, by_threads, by_smem) + 1):
            x = [(s.cost(t, res, 1.0, sms), s.times[name]) for s in pts]
            w = [tm ** weight for _, tm in x]
            wsum = sum(w)
            lns = sum(wi * math.log(tm * 1e6 / c) for wi, (c, tm) in zip(w, x)) / wsum
            err = sum(wi * (math.log(c * math.exp(lns) / 1e6 / tm)) ** 2
                      for wi, (c, tm) in zip(w, x)) / wsum
            if best is None or err < best[0]:
                best = (err, res, math.exp(lns))
        params[name] = (best[1], int(round(best[2])))
    return params


def selection_refine(data, tiles, params, sms):
    """Coordinate descent on log(ns): the summed chosen time, each batch weighted by its total."""
    def objective(p):
        return sum(totals(sh, tiles, p, sms)["all"] / w for sh, w in data)
    p = dict(params)
    cur = objective(p)
    for _ in range(4):
        improved = False
        for name in p:
            res, ns = p[name]
            if not ns:
                continue
            for f in (0.7, 0.85, 0.93, 1.07, 1.18, 1.4):
                q = dict(p)
                q[name] = (res, int(ns * f))
                v = objective(q)
                if v < cur - 1e-9:
                    p, cur, improved = q, v, True
                    ns = p[name][1]
        if not improved:
            break
    return p


# --alone: the latency model for layers with few tiles (gemmShader's latencyChoice), fitted to
# batch-1 shapes timed with the caches flushed before each dispatch (vkcnn-bench-conv --cold), as
# a layer inside a network sees its weights: each candidate tile with its reduction split 1, 2, 4,
# 8 ways.
ALONE_RUN = "2026-11-27-h200-b1-splits/cold/conv_shapes.json"
ALONE_TILES = ("64x64p2", "128x128", "64x128w8p2")


def alone_cost(key, tile, splits, p, sms):
    c, h, w, k, kh, kw, sh, sw, ph, pw, dh, dw, g = key
    rows = out_size(h, kh, sh, ph, dh) * out_size(w, kw, sw, pw, dw)
    chunks = -(-(kh * kw * ((c + 3) // 4) * 4) // 32)
    tr, tc = tile["rows"], tile["cols"]
    tiles = -(-rows // tr) * -(-(((k + 3) // 4) * 4) // tc)
    waves = -(-tiles * splits // sms)
    return p["c0"] + waves * -(-chunks // splits) * p[tile["name"]] + \
        ((p["r0"] + p["rz"] * splits) if splits > 1 else 0.0)


def alone(sms):
    tiles = tiles_from_header()
    rows = json.load(open(os.path.join(RES, ALONE_RUN)))["runs"]["fp16_b1"]
    pts = []  # (key, tile, splits, measured us)
    for r in rows:
        if r["key"][12] > 1:
            continue
        for col, v in r.items():
            m = re.match(r"vk_(.*?)(?:s(\d+))?$", col)
            if m and m.group(1) in ALONE_TILES and isinstance(v, (int, float)):
                pts.append((tuple(r["key"]), m.group(1), int(m.group(2) or 1), v * 1000))
    for n in ALONE_TILES:
        tiles[n]["name"] = n

    def err(p):
        return sum((math.log(alone_cost(k, tiles[t], z, p, sms)) - math.log(v)) ** 2
                   for k, t, z, v in pts)
    p = {"c0": 5.0, "r0": 2.0, "rz": 0.5, **{n: 0.7 for n in ALONE_TILES}}
    best = err(p)
    for _ in range(10):
        for key in list(p):
            for f in (0.5, 0.7, 0.85, 0.93, 0.97, 1.03, 1.07, 1.15, 1.4, 2):
                q = dict(p, **{key: p[key] * f})
                e = err(q)
                if e < best:
                    best, p = e, q
    print(f"{len(pts)} timings; fit (microseconds): " +
          ", ".join(f"{k} {v:.3f}" for k, v in p.items()))
    # The replay: where the committed selector took a tile (cfg_auto), the model's pick instead,
    # under the gate of gemmShader (fewer than 2 x SMs 64 x 64 tiles, at least 8 chunks).
    auto = pick = oracle = 0.0
    for r in rows:
        key = tuple(r["key"])
        if key[12] > 1:
            continue
        n, a = r["count"], r["vk_auto"] * 1000
        c, h, w, k, kh, kw, sh, sw, ph, pw, dh, dw, g = key
        pixels = out_size(h, kh, sh, ph, dh) * out_size(w, kw, sw, pw, dw)
        chunks = -(-(kh * kw * ((c + 3) // 4) * 4) // 32)
        measured = {(t, z): r[f"vk_{t}" + (f"s{z}" if z > 1 else "")] * 1000
                    for t in ALONE_TILES for z in (1, 2, 4, 8)
                    if f"vk_{t}" + (f"s{z}" if z > 1 else "") in r}
        everything = [v * 1000 for col, v in r.items()
                      if col.startswith("vk_") and col != "vk_best" and isinstance(v, (int, float))]
        auto += a * n
        oracle += min(everything) * n
        on_tiles = not r["cfg_auto"].rsplit("(", 1)[-1].startswith("matrix_")
        taken = on_tiles and -(-pixels // 64) * -(-k // 64) < 2 * sms and chunks >= 8
        if not taken:
            pick += a * n
            continue
        choice = min(measured, key=lambda tz: alone_cost(key, tiles[tz[0]], tz[1], p, sms))
        pick += measured[choice] * n
        if abs(measured[choice] - a) * n > 2:
            print(f"  {r['desc']:26s} x{n:<2d} {r['cfg_auto'].split('(')[-1][:-1]:>10s} {a:6.1f}"
                  f" -> {choice[0]}{'s%d' % choice[1] if choice[1] > 1 else ''} {measured[choice]:6.1f} us")
    print(f"batch 1, weights from DRAM, sum of time x uses: selector before {auto / 1000:.3f} ms, "
          f"with the latency model {pick / 1000:.3f}, oracle (every column) {oracle / 1000:.3f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--layers", type=int, default=2048)
    ap.add_argument("--selection", action="store_true")
    ap.add_argument("--weight", type=float, default=0.5,
                    help="fit weights = time**WEIGHT (0: every shape alike, 1: by time)")
    ap.add_argument("--alone", action="store_true",
                    help="fit the latency model of layers with few tiles (nanosecondsPerChunkAlone)")
    a = ap.parse_args()
    if a.alone:
        return alone(a.sms)
    tiles = tiles_from_header()
    current = {n: (t["res"], t["ns"]) for n, t in tiles.items()}
    data = {b: load(b, a.layers, tiles) for b in ("fp16_b32", "fp16_b1")}
    # The model is fitted to the batch-32 table (where the tiles run; at batch 1 most layers go
    # to the split-k shaders) and judged on both.
    refit = fit(data["fp16_b32"], tiles, a.sms, a.weight)
    # A tile the current header keeps forced-only (ns 0) stays so if the refit does not beat
    # the model without it.
    models = [("current", current), ("refit", refit)]
    if a.selection:
        w = [(data[b], totals(data[b], tiles, refit, a.sms, True)["all"]) for b in data]
        models.append(("refit+selection", selection_refine(w, tiles, refit, a.sms)))
    print("tile          current (res, ns)   refit (res, ns)" +
          ("   refit+selection" if a.selection else ""))
    for n in tiles:
        row = f"{n:12s}  {str(current[n]):18s}  {str(refit[n]):16s}"
        if a.selection:
            row += f"  {models[-1][1][n]}"
        print(row)
    for b, shapes in data.items():
        o = totals(shapes, tiles, None, a.sms, oracle=True)
        res = {name: totals(shapes, tiles, p, a.sms) for name, p in models}
        print(f"\n{b}: convolution time, ms (sum of time x uses; {len(shapes)} shapes, "
              f"{sum(1 for s in shapes if s.grouped)} grouped)")
        print("network               oracle  " + "  ".join(f"{n:>15s}" for n, _ in models))
        for net in sorted(o, key=lambda k: (k == "all", k)):
            print(f"{net:20s} {o[net]:7.3f}  " + "  ".join(f"{res[n][net]:15.3f}" for n, _ in models))
        for name, p in models:
            picks = [choose(s, tiles, p, a.sms) for s in shapes]
            changed = sum(1 for s, c in zip(shapes, picks) if c != choose(s, tiles, current, a.sms))
            narrow = sum(1 for s, c in zip(shapes, picks)
                         if not s.grouped and tiles.get(c, {}).get("cols", 64) < 64)
            print(f"  {name}: {changed} shapes choose differently from current, {narrow} dense shapes on a narrow tile")
    print("\nconvolution_tiles.h rows (resident, nanosecondsPerStage):")
    final = models[-1][1]
    for n in tiles:
        print(f'  "{n}": {final[n][0]}, {final[n][1]}')


if __name__ == "__main__":
    sys.exit(main())
