#!/usr/bin/env python3
"""Refit the convolution selector's cost model (glsl/convolution_tiles.h) from committed
per-shape forced timings, without a GPU.

The model (engine/src/kernels/convolution.cpp, gemmShader and groupedTile): a matrix-unit tile
costs waves x (stages x nanosecondsPerStage + nanosecondsPerWave) per dispatch, where waves =
ceil(tiles / (SMs x residentPerMultiprocessor)) and stages = ceil(K / tile depth); the per-wave
term is what a wave costs besides its stages (prologue, epilogue, stores). The layers it decides
are those gemmShader hands it ("the model's regime", regime() below): not the ones its latency
model, the split reduction or the split-k shaders take, and not the 3x3 layers Winograd's rule
takes (winograd_taken()). This script

  1. takes every tile's time on every shape of that regime at batch 32: the timestamps of one
     dispatch where the layer fits one Image (RUNS, the smaller of two samples where SECOND
     gives another), and where the layer limit splits the batch the wall time of the pieces as
     a Graph runs them, through Convolution::encodeBatch (PIECES, the smaller of two runs):
     timestamps there would time each piece alone;
  2. fits each tile's (resident, nanosecondsPerStage, nanosecondsPerWave) to those times
     (least squares of the relative error, weights = time**WEIGHT);
  3. with --selection, refines the fitted nanoseconds by coordinate descent on what the model
     then chooses (the choice, not the fit, is what costs time): each network's chosen time
     over its oracle's, summed;
  4. reports, per network, the measured time of the current constants' choice, of the fit's, of
     the refined one's and of the best tile per shape (oracle), at batch 32 and on the model's
     regime at batch 1 (where the timestamps are what a Graph runs), a held-out check (fit and
     refine on half the shapes, judged on the other half), and prints the table rows.

Usage: scripts/bench/fit_cost_model.py [--sms 132] [--layers 2048] [--selection] [--alone]
  --alone      fit the latency model of layers with few tiles instead (ALONE_RUN below).

The timings are named by their paths under bench/results/ as the runs wrote them. The ones the
committed constants were fitted to are kept in bench/data/cost-model-fit.tar.xz (the folders keep
only summaries); a file of that path under bench/results/, as a new run leaves it, is read first.
"""
import argparse
import collections
import io
import json
import math
import os
import random
import re
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RES = os.path.join(ROOT, "bench", "results")
DATA = os.path.join(ROOT, "bench", "data", "cost-model-fit.tar.xz")
_archive = []


def open_result(path):
    """A run's file by its path under bench/results: the file if it is there, else its copy in
    bench/data/cost-model-fit.tar.xz."""
    full = os.path.join(RES, path)
    if os.path.exists(full):
        return open(full)
    if not _archive:
        _archive.append(tarfile.open(DATA, "r:xz"))
    return io.TextIOWrapper(_archive[0].extractfile(path), encoding="utf-8")


S30 = "2026-11-28-s30"
# Every tile forced on every shape of nine networks at batch 32 and 1, timestamps, after session
# 29's main loop (H200; session 30, run 1: bench/DECISIONS.md#cost-model).
RUNS = [f"{S30}/refit/conv_shapes.json"]
# Run 2: the unsplit shapes of the regime again, timestamps (shape names in the shapes file).
SECOND = [(f"{S30}/pieces/run2-whole.jsonl", f"{S30}/shapes_whole_b32.txt", "tile", "ms")]
# Runs 2-4: the split shapes through encodeBatch, so that the pieces run side by side (runs 2
# and 3 wall time, run 4 timestamps at the barriers: vkcnn-bench-conv --batch). Within a shape
# each of them timed some configurations up to 2-4x slow (the clocks, in the order timed; 128x128
# timed again last disagreed with itself): the smallest of the three, and never more than the
# pieces one after another (run 1), is taken.
PIECES = [(f"{S30}/pieces/run2.jsonl", f"{S30}/shapes_pieces_b32.txt", "pieces_tile", "batch_ms"),
          (f"{S30}/pieces/run3.jsonl", f"{S30}/shapes_pieces_b32.txt", "pieces_tile", "batch_ms"),
          (f"{S30}/pieces/run4.jsonl", f"{S30}/shapes_pieces_b32.txt", "tile", "ms")]
SPLITK = "legacy"  # the split-k shaders' column
# Tiles no model offers (forced or tuned only): the grouped-only narrow ones of 128 rows.
NOT_MODELLED = ("128x16", "128x32", "64x64p2")


def tiles_from_header():
    text = open(os.path.join(ROOT, "glsl", "convolution_tiles.h")).read()
    tiles = {}
    for m in re.finditer(r'\{"([0-9a-z]+)",\s*([^}]*)\}', text):
        # Numbers only (withResidual, a bool, is not the model's and reads as 1 or 0).
        v = [int(x) if x.strip().isdigit() else int(x.strip() == "true")
             for x in m.group(2).split(",") if x.strip()]
        if len(v) < 7:  # kFullyConnectedMatrixTiles' entries, not convolution tiles
            continue
        wm, wn, fm, fn, ks, res, ns = v[:7]
        tiles[m.group(1)] = dict(rows=wm * fm * 16, cols=wn * fn * 16, depth=16 * ks, res=res, ns=ns,
                                 dense_waves=v[9] if len(v) > 9 else 0,  # MatrixTile::denseWaves
                                 wave=v[10] if len(v) > 10 else 0,  # nanosecondsPerWave
                                 max_cols=v[12] if len(v) > 12 else 0,  # maxColumns (v[11]: withResidual)
                                 threads=32 * wm * wn,
                                 smem=2 * (wm * fm * 16 * (ks * 32 + 16) + ks * 16 * (wn * fn * 32 + 16)) +
                                 wm * wn * 16 * 20 * 4)
    return tiles


def out_size(x, k, s, p, d):
    return (x + 2 * p - d * (k - 1) - 1) // s + 1


class Shape:
    def __init__(self, rec, batch, layers):
        c, h, w, k, kh, kw, sh, sw, ph, pw, dh, dw, g = rec["key"]
        self.key, self.batch = tuple(rec["key"]), batch
        self.desc, self.g, self.c, self.k = rec["desc"], g, c, k
        self.kh, self.kw, self.sh, self.sw = kh, kw, sh, sw
        self.nets = {n.split(":")[0]: int(n.split(":")[1]) for n in rec["nets"].split(",") if n}
        self.count = rec["count"]
        self.oh, self.ow = out_size(h, kh, sh, ph, dh), out_size(w, kw, sw, pw, dw)
        chunk = min(batch, layers // ((c + 3) // 4), layers // ((k + 3) // 4))
        self.chunks = [chunk] * (batch // chunk) + ([batch % chunk] if batch % chunk else [])
        self.depthwise = g > 1 and g == c and g == k
        self.grouped = g > 1 and not self.depthwise
        self.dilated = dh > 1 or dw > 1
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

    def tiles(self, t):
        # Every piece of the batch side by side (imagesSideBySide), as gemmShader counts them.
        rows = self.ow * self.oh * self.chunks[0]
        per = -(-rows // t["rows"]) * ((self.cols // t["cols"]) * self.g if self.grouped
                                       else -(-self.cols // t["cols"]))
        return per * len(self.chunks)

    def cost(self, t, p, sms):
        res, ns, wave = p
        return -(-self.tiles(t) // (sms * res)) * (-(-self.K // t["depth"]) * ns + wave)

    def regime(self, sms):
        """Which part of gemmShader decides a dense layer: "model" (the cost model), "latency",
        "split" or "legacy"; "grouped" and "other" (depthwise, direct) are not its."""
        if self.depthwise or not self.tiled:
            return "other"
        if self.grouped:
            return "grouped"
        pieces = len(self.chunks)
        rows = self.oh * self.ow * self.chunks[0]

        def tiles_of(r, c):
            return -(-rows // r) * -(-self.cols // c) * pieces
        chunks = -(-self.K // 32)
        few = tiles_of(32, 64)
        splits = min(8, 2 * sms // few, chunks // 8) if few else 0
        split_rule = pieces == 1 and few >= 16 and few * chunks >= 1024 and splits >= 2
        tiled = 5 * few >= 3 * sms
        if pieces == 1 and chunks >= 8 and tiles_of(64, 64) < 2 * sms and (tiled or split_rule):
            return "latency"
        if tiled:
            return "model"
        return "split" if split_rule else "legacy"

    def winograd_taken(self):
        """winogradChosen on the matrix units (convolution.cpp)."""
        if (self.kh, self.kw, self.sh, self.sw) != (3, 3, 1, 1) or self.dilated or self.g > 1:
            return False
        pixels = self.oh * self.ow * self.batch
        return (self.c >= 256 and self.k >= 256 and 18.0 * pixels * self.c * self.k >= 1.5e9 and
                (self.c >= 512 or pixels < 8192))


def load(batch, layers, sms):
    """The shapes of the model's regime at `batch` (fp16_b32 or fp16_b1), each with its tiles'
    times (ms) as a Graph would meet them."""
    shapes = {}
    for path in RUNS:
        for rec in json.load(open_result(path))["runs"].get(batch, []):
            s = shapes.setdefault(tuple(rec["key"]), Shape(rec, int(batch.split("_b")[1]), layers))
            for col, v in rec.items():
                name = col[3:]
                if not col.startswith("vk_") or not v or name in ("auto", "best"):
                    continue
                # A forced tile that does not apply falls back: keep only what really ran.
                m = re.search(r"\((?:grouped )?([^()]*)\)\s*$", rec.get("cfg_" + name, ""))
                if m and m.group(1) != name and name != SPLITK:
                    continue
                s.times[name] = min(v, s.times.get(name, v))

    def extra(files):
        """{shape key: {tile: smallest time}} of jsonl files of vkcnn-bench-conv."""
        out = collections.defaultdict(dict)
        for jsonl, names, field, timed in files:
            keys = {}
            for line in open_result(names):
                v = line.split()
                keys[v[0]] = tuple(int(x) for x in v[2:])
            for line in open_result(jsonl):
                r = json.loads(line)
                tile, ms = r.get(field), r.get(timed)
                if ms and tile != "auto":
                    times = out[keys[r["name"]]]
                    times[tile] = min(ms, times.get(tile, ms))
        return out
    if batch == "fp16_b32":
        for key, times in extra(SECOND).items():
            s = shapes[key]
            for t, v in times.items():
                if t in s.times:
                    s.times[t] = min(s.times[t], v)
        for key, times in extra(PIECES).items():
            s = shapes[key]
            if len(s.chunks) > 1:
                # The serial pieces' timestamps are not what runs; they bound it.
                s.times = {t: min(v, s.times.get(t, v)) for t, v in times.items()}
    return [s for s in shapes.values() if s.regime(sms) == "model" and not s.winograd_taken()]


def choose(s, tiles, params, sms):
    """gemmShader's cost model: the cheapest tile with constants (denseWaves and maxColumns
    gating; withResidual does not apply, the per-shape runs add no residual)."""
    best, best_cost = None, 0.0
    for name, t in tiles.items():
        p = params.get(name)
        if not p or not p[1] or name not in s.times:
            continue
        if t["dense_waves"] and s.tiles(t) < t["dense_waves"] * sms * p[0]:
            continue
        if t["max_cols"] and s.cols > t["max_cols"]:
            continue
        c = s.cost(t, p, sms)
        if best is None or c < best_cost:
            best, best_cost = name, c
    return best


def total(shapes, tiles, params, sms, per_net=False):
    out = collections.defaultdict(float)
    for s in shapes:
        t = s.times[choose(s, tiles, params, sms)]
        out["all"] += t * s.count
        for net, n in s.nets.items():
            out[net] += t * n
    return out if per_net else out["all"]


def oracle(shapes, tiles, per_net=False):
    out = collections.defaultdict(float)
    for s in shapes:
        t = min(v for k, v in s.times.items() if k in tiles and k not in NOT_MODELLED)
        out["all"] += t * s.count
        for net, n in s.nets.items():
            out[net] += t * n
    return out if per_net else out["all"]


def fit(shapes, tiles, sms, weight):
    """Per tile, the residency and the two nanoseconds minimising the weighted squared relative
    error of waves x (stages x a + b) against the measured times (non-negative)."""
    params = {}
    for name, t in tiles.items():
        pts = [s for s in shapes if name in s.times]
        if name in NOT_MODELLED or len(pts) < 5:
            params[name] = (t["res"], 0, 0)
            continue
        best = None
        for res in range(1, 9):
            if res * t["threads"] > 2048 or res * (t["smem"] + 1024) > 228 * 1024:
                break
            rows = []  # (waves / ms, waves x stages / ms, weight)
            for s in pts:
                waves = -(-s.tiles(t) // (sms * res))
                m = s.times[name]
                rows.append((waves * -(-s.K // t["depth"]) / m, waves / m, m ** weight))
            candidates = []
            s11 = sum(w * a * a for a, _, w in rows)
            s22 = sum(w * b * b for _, b, w in rows)
            s12 = sum(w * a * b for a, b, w in rows)
            r1 = sum(w * a for a, _, w in rows)
            r2 = sum(w * b for _, b, w in rows)
            det = s11 * s22 - s12 * s12
            if det > 0:
                candidates.append(((r1 * s22 - r2 * s12) / det, (s11 * r2 - s12 * r1) / det))
            candidates += [(r1 / s11, 0.0), (0.0, r2 / s22)]
            for a, b in candidates:
                if a < 0 or b < 0:
                    continue
                err = sum(w * (x * a + y * b - 1) ** 2 for x, y, w in rows) / sum(w for *_, w in rows)
                if best is None or err < best[0]:
                    best = (err, res, a * 1e6, b * 1e6)
        params[name] = (best[1], int(round(best[2])), int(round(best[3])))
    return params


def selection_refine(shapes, tiles, params, sms):
    """Coordinate descent on each tile's two nanoseconds: the chosen time of every network
    relative to its oracle, summed (so that the networks with the most layers do not decide
    alone)."""
    best = oracle(shapes, tiles, True)

    def objective(p):
        t = total(shapes, tiles, p, sms, True)
        return sum(t[n] / best[n] for n in best if n != "all" and best[n] > 0)
    p = dict(params)
    cur = objective(p)
    for _ in range(20):
        improved = False
        for name in p:
            for i in (1, 2):
                for f in (0.5, 0.7, 0.85, 0.93, 1.07, 1.15, 1.4, 2):
                    if not p[name][1]:
                        continue
                    q = dict(p)
                    v = list(q[name])
                    v[i] = int(v[i] * f)
                    q[name] = tuple(v)
                    c = objective(q)
                    if c < cur - 1e-9:
                        p, cur, improved = q, c, True
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
    rows = json.load(open_result(ALONE_RUN))["runs"]["fp16_b1"]
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
    current = {n: (t["res"], t["ns"], t["wave"]) for n, t in tiles.items()}
    b32, b1 = load("fp16_b32", a.layers, a.sms), load("fp16_b1", a.layers, a.sms)
    refit = fit(b32, tiles, a.sms, a.weight)
    models = [("current", current), ("fit", refit)]
    if a.selection:
        models.append(("fit+selection", selection_refine(b32, tiles, refit, a.sms)))
    print("tile          current (res, ns/stage, ns/wave)   fit" +
          ("                 fit+selection" if a.selection else ""))
    for n in tiles:
        print(f"{n:12s}  {str(current[n]):34s}  {str(refit[n]):18s}  " +
              (str(models[-1][1][n]) if a.selection else ""))
    for label, shapes in (("batch 32", b32), ("batch 1", b1)):
        o = oracle(shapes, tiles, True)
        res = {name: total(shapes, tiles, p, a.sms, True) for name, p in models}
        print(f"\n{label}: the cost model's regime, ms (sum of time x uses; {len(shapes)} shapes)")
        print("network               oracle  " + "  ".join(f"{n:>13s}" for n, _ in models))
        for net in sorted(o, key=lambda k: (k == "all", k)):
            print(f"{net:20s} {o[net]:7.3f}  " + "  ".join(f"{res[n][net]:13.3f}" for n, _ in models))
    # Held out: fitted (and refined) on half the batch-32 shapes, judged on the other half.
    print("\nheld out (batch 32, three random halves): current / fit / fit+selection / oracle")
    for seed in (1, 2, 3):
        order = sorted(b32, key=lambda s: s.key)
        random.Random(seed).shuffle(order)
        train, test = order[::2], order[1::2]
        p = fit(train, tiles, a.sms, a.weight)
        q = selection_refine(train, tiles, p, a.sms) if a.selection else p
        print(f"  {total(test, tiles, current, a.sms):.3f} / {total(test, tiles, p, a.sms):.3f} / "
              f"{total(test, tiles, q, a.sms):.3f} / {oracle(test, tiles):.3f}")
    print("\nconvolution_tiles.h (resident, nanosecondsPerStage, nanosecondsPerWave):")
    final = models[-1][1]
    for n in tiles:
        print(f'  "{n}": {final[n][0]}, {final[n][1]}, {final[n][2]}')


if __name__ == "__main__":
    sys.exit(main())
