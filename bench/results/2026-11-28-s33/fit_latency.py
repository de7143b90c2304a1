# Session 33, run 9: refits the latency model (gemmShader latencyChoice) to r9.tgz with waves counted
# at 1-3 workgroups a multiprocessor per tile, and replays each fit on the 24 shapes (uses from
# session 20's cold set). Reads /tmp/r9/latency.jsonl (tar xzf r9.tgz -C /tmp).
import json, math, re, collections, sys, itertools, os
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
sess20 = json.load(open(os.path.join(RESULTS, '2026-11-27-h200-b1-splits/cold/conv_shapes.json')))['runs']['fp16_b1']
uses = {}
for i, row in enumerate(sess20): uses[f"L{i}"] = (row['count'], row['desc'], tuple(row['key']))
T = collections.defaultdict(dict); auto_cfg = {}
for l in open('/tmp/r9/latency.jsonl'):
    if not l.startswith('{'): continue
    j = json.loads(l); T[j['name']][j['tile']] = j['ms'] * 1000
    if j['tile'] == 'auto': auto_cfg[j['name']] = j['config'].split('(')[-1].rstrip(')')
TILES = {"64x64p2": (64, 64), "64x128w8p2": (64, 128), "128x128": (128, 128)}
def osz(h,k,s,p,d): return (h+2*p-d*(k-1)-1)//s+1
def geom(key):
    c,h,w,k,kh,kw,sh,sw,ph,pw,dh,dw,g = key
    rows = osz(h,kh,sh,ph,dh)*osz(w,kw,sw,pw,dw)
    chunks = -(-(kh*kw*((c+3)//4)*4)//32)
    return rows, chunks, ((k+3)//4)*4
def cost(key, t, z, p, R, sms=132, zmax=8):
    rows, chunks, cols = geom(key); tr, tc = TILES[t]
    tiles = -(-rows//tr) * -(-cols//tc)
    waves = -(-tiles*z // (sms*R[t]))
    return p['c0'] + waves * -(-chunks//z) * p[t] + ((p['r0'] + p['rz']*z) if z > 1 else 0)
pts = []
for n, d in T.items():
    key = uses[n][2]
    for col, v in d.items():
        m = re.match(r"(64x64p2|64x128w8p2|128x128)(?:s(\d+))?$", col)
        if m: pts.append((n, key, m.group(1), int(m.group(2) or 1), v))
def fit(R, zs):
    P = [q for q in pts if q[3] in zs]
    def err(p): return sum((math.log(cost(k,t,z,p,R)) - math.log(v))**2 for _,k,t,z,v in P)
    p = {"c0": 5.0, "r0": 2.0, "rz": 0.5, **{t: 0.7 for t in TILES}}; best = err(p)
    for _ in range(12):
        for key in list(p):
            for f in (0.5,0.7,0.85,0.93,0.97,1.03,1.07,1.15,1.4,2):
                q = dict(p, **{key: p[key]*f}); e = err(q)
                if e < best: best, p = e, q
    return p, best
def replay(p, R, zs, show=False):
    auto = pick = oracle = 0.0
    for n, d in T.items():
        cnt, desc, key = uses[n]
        cands = {(t, z): d[t + (f"s{z}" if z > 1 else "")] for t in TILES for z in zs if (t + (f"s{z}" if z > 1 else "")) in d}
        choice = min(cands, key=lambda tz: cost(key, tz[0], tz[1], p, R))
        auto += d['auto']*cnt; pick += cands[choice]*cnt; oracle += min(cands.values())*cnt
        if show and abs(cands[choice]-d['auto'])*cnt > 1:
            print(f"   {desc:26s} x{cnt} {auto_cfg[n]:>14s} {d['auto']:6.1f} -> {choice[0]}s{choice[1]} {cands[choice]:6.1f}")
    return auto/1000, pick/1000, oracle/1000
for zs in ((1,2,4,8), (1,2,4,8,16)):
    for r1, r2, r3 in itertools.product((1,2,3), (1,2), (1,)):
        R = {"64x64p2": r1, "64x128w8p2": r2, "128x128": r3}
        p, e = fit(R, zs)
        a, k, o = replay(p, R, zs)
        print(zs, R, f"err {e:.2f}", f"auto {a:.3f} model {k:.3f} oracle {o:.3f}", {q: round(v, 3) for q, v in p.items()})
