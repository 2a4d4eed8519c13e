"""Which parts of each TPC-H query do not scale: LADLE_TRACE=2 at 1 and 16
threads, each phase's time (and each node's own time, its inputs' taken off)
at both, ranked by the time lost to poor scaling, t16 - t1/16. A phase near
1x from 1 to 16 threads is serial code. On the device, from the repository
root with devcarry/ carried (bench/device/scaling.sh builds and sets paths):

  DEV_SCRIPT=bench/device/phase_scaling.py bash bench/device/scaling.sh q3 q9

Reads bench/data/tpch-sf1/*.parquet (written by scaling.sh's first run).
PHASE_HI sets the higher thread count (16; 2 on a 2-core machine, where a
phase near 1x from 1 to 2 threads is as telling).
Nodes' times include their phases, so a node's line and its phases' lines
overlap; read them together."""
import os, re, subprocess, sys
QS = sys.argv[1:] or [f"q{i}" for i in range(1, 23)]
def trace(q, th):
    code = f"""
import sys; sys.path[:0]=['tests/python','bench']
import polars as pl, ladle, tpch_queries as T
d='bench/data/tpch-sf1'
tabs={{n: pl.read_parquet(f'{{d}}/{{n}}.parquet').lazy() for n in ['lineitem','orders','customer','part','partsupp','supplier','nation','region']}}
e=ladle.Engine(threads={th}, raise_on_fail=True)
lf=T.{q}(tabs)
for _ in range(3): lf.collect(engine=e)
print('=== SECOND', file=sys.stderr, flush=True)
lf.collect(engine=e)
"""
    r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, LADLE_TRACE="2"), capture_output=True, text=True)
    err = r.stderr[r.stderr.find("=== SECOND"):].splitlines()[1:]
    out = []  # (name, ms, self_ms)
    stack = []  # (indent, index)
    for line in err:
        m = re.match(r"ladle: (\s*)(\. )?(.*?) rows=(\d+).*? ([\d.]+) ms", line)
        if not m: continue
        ind, ph, name, rows, ms = len(m.group(1)), m.group(2), m.group(3), m.group(4), float(m.group(5))
        if ph:
            out.append([". " + name, ms, ms]); continue
        out.append([name, ms, ms])
        # children printed before the parent, deeper indented: subtract direct children (indent+2)
        idx = len(out) - 1
        kids = [i for (d, i) in stack if d == ind + 2]
        for i in kids:
            out[idx][2] -= out[i][1]
        stack = [(d, i) for (d, i) in stack if d <= ind] + [(ind, idx)]
    return out
HI = int(os.environ.get("PHASE_HI", "16"))
tot = []
for q in QS:
    a, b = trace(q, 1), trace(q, HI)
    if [x[0] for x in a] != [x[0] for x in b]:
        print(q, "plans differ"); continue
    rows = []
    for x, y in zip(a, b):
        lost = y[2] - x[2] / HI
        rows.append((lost, x[0], x[2], y[2]))
    rows.sort(reverse=True)
    t1, t16 = a[-1][1], b[-1][1]
    print(f"{q}: total 1t {t1:.1f} {HI}t {t16:.1f} speedup {t1 / max(t16, 1e-9):.1f}")
    for lost, n, s1, s16 in rows[:int(os.environ.get("PHASE_TOP", "5"))]:
        print(f"   lost {lost:5.2f}  1t {s1:6.2f} {HI}t {s16:5.2f} x{s1 / max(s16, 1e-3):4.1f}  {n}")
