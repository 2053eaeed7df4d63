"""Is there a layout of map96 on wse2 with >= 80% of the PEs in regions and the bottleneck
stage <= 1.25x the mean? A layout planner in miniature, independent of the mapper's placer
(BENCHMARKS.md, "A plan for map96", session 30, branch plan96).

Usage: python3 benches/plan96.py [--c-below-r] [--balanced] [--targets 50:94:4] [--show T]
       [--vertical-only] [--table FILE]

The chain: 48 fused `dense + relu` stages, stage l maps N = WIDTHS[l % 6] to M = WIDTHS[(l+1)
% 6]. Each stage is a `dense_tile` (x in on one side, y out of the next side round: it turns
the chain) or a `dense_straight` (x in west, y out east on the same rows: it does not). Its
time on R x C is the mapper's estimate (compiler/map/src/estimate.rs; for these layer graphs
the work is the multiply-adds spread over the PEs, `ceil(flops / 2 / (R C))`, fma rate 1):

    tile      N/R + ceil(work / (R C)) + M/C            (N % R == 0, M % C == 0)
    straight  N/R + ceil(work / (R C)) + ceil(M/R)      (C % R == 0, N % C == 0, R <= M)

checked against every candidate of the size search's table with `--table` (dumped from
`search::Problem` by a throwaway test, not kept).

The layout: a boustrophedon of bands across the fabric's shorter side (or its longer one,
`vertical`). A band of height h holds straight stages with R = h (their lengths C along it).
Turns (docs/mapping.md section 2: a tile turns the chain right in a rotation and left in a
reflection and flips the kind of its consumer; a fold adds a quarter turn either way and
flips it too; a straight keeps it), so a U-turn is one tile and one fold:

    east end:  ... straights | TILE (h x h')      band k,   rows y .. y+h
          ... straights west | SQUARE (h' x h')   band k+1, the fold of the tile's h' parts
    west end:  SQUARE (h x h) | straights ...     band k+1, the fold of the band's h parts
               TILE (h x h')  | straights east    band k+2, rows below: the next band's height

The tile at a turn sets the next band's height (its C: the parts it gives); a band's height
is one of HEIGHTS. A dynamic programme over (stage, band direction, band height, chain head
x, band top y) finds, for a stage target T (every stage within it) and a weight w, the plan
with the most PEs in regions + w x the sum of the stage times (w = 0: the fullest; large w:
the largest mean stage, the best balance T allows). `--balanced` runs the same moves keeping
per state the Pareto front of (sum of stage times, PEs): the most PEs of any plan whose
bottleneck is at most 1.25x its mean, exactly. `--c-below-r` lets a straight stage also take
C < R with R % C == 0 (a rule today's dense_straight lacks; same estimate) to see what it lifts.
Geometry is checked on every plan printed (inside the fabric, regions and squares disjoint;
consecutive stages adjacent by construction of the moves).
"""

import argparse
import math

WIDTHS = [256, 512, 1024, 384, 128, 768]
STAGES = 48
W, H = 750, 994  # wse2: columns, rows
LIVE = W * H
SRAM_WORDS = 48 * 1024 // 4
HEIGHTS = [16, 24, 32, 48, 64, 96, 128]  # band heights tried: straight R values (R | N, R <= 128)


def shape(l):
    n, m = WIDTHS[l % 6], WIDTHS[(l + 1) % 6]
    # flops / 2: the dense's multiply-adds and bias; the relu fused into all but the last.
    work = n * m + m if l < STAGES - 1 else n * m + m // 2
    return n, m, work


def tile_time(l, r, c):
    """`dense_tile` on r x c, or None when its conditions or SRAM do not allow it."""
    n, m, work = shape(l)
    if n % r or m % c or (n // r) * (m // c) + 3 * (m // c) + n // r + 1 > SRAM_WORDS:
        return None
    return n // r + math.ceil(work / (r * c)) + (m // c if r > 1 else 0)


STRAIGHT_C_BELOW_R = False  # --c-below-r


def straight_time(l, r, c):
    """`dense_straight` on r x c, or None when its conditions or SRAM do not allow it."""
    n, m, work = shape(l)
    if (c % r and not (STRAIGHT_C_BELOW_R and r % c == 0)) or n % c or r > m:
        return None
    rows = math.ceil(m / r)
    if (n // c + 3) * rows + 2 * (n // r + n // c) + 10 > SRAM_WORDS:
        return None
    return n // r + math.ceil(work / (r * c)) + (rows if c > 1 else 0)


def check_table(path):
    """The formulas against the size search's own table (kind, stage, R, C, cycles, ...)."""
    bad = total = 0
    for line in open(path):
        if line.startswith("#"):
            continue
        kind, l, r, c, cycles = line.split()[:5]
        l, r, c, cycles = int(l), int(r), int(c), int(cycles)
        if r < 8 or c < 8:  # the host's pace decides some tiny regions; not used here
            continue
        f = tile_time if kind == "tile" else straight_time
        total += 1
        bad += f(l, r, c) != cycles
    print(f"formulas against the search's table: {total - bad} of {total} candidates agree")


def plan(target, band_length, stack, weight=0):
    """The boustrophedon plan with every stage within `target` and the most PEs + `weight` x
    the stages' sum: (score, back pointer) or None. `band_length` runs along the bands,
    `stack` across them; the layers' tables are left in `plan.tables` for `walk`."""
    ok = lambda t: t is not None and t <= target
    # state: (phase, h, x, y); phase 'E' east band, 'W0' west band before its first straight,
    # 'W' west band. Value: (score, back pointer).
    lengths = {h: [c for c in range(8, band_length + 1, 8) if c % h == 0 or h % c == 0]
               for h in HEIGHTS}
    states = {}
    for h in HEIGHTS:
        if h <= stack:
            states[("E", h, 0, 0)] = (0, None)
    for l in range(STAGES):
        nxt = {}

        def put(key, pes, step, prev):
            score = pes + weight * step[4]
            if key not in nxt or nxt[key][0] < score:
                nxt[key] = (score, (prev, step))

        for key, (pes, _) in states.items():
            phase, h, x, y = key
            for c in lengths[h]:  # a straight of R = h, length c
                t = straight_time(l, h, c)
                if not ok(t):
                    continue
                if phase == "E" and x + c <= band_length:
                    put(("E", h, x + c, y), pes + h * c, ("straight", l, h, c, t, x, y, +1), key)
                if phase != "E" and x - c >= h:
                    put(("W", h, x - c, y), pes + h * c, ("straight", l, h, c, t, x - c, y, -1), key)
            if phase == "W0":
                continue
            for h2 in HEIGHTS:  # the turning tile, R = h (x parts), C = h2 (next band's height)
                t = tile_time(l, h, h2)
                if not ok(t) or y + h + h2 > stack:
                    continue
                if phase == "E" and x + h2 <= band_length:
                    put(("W0", h2, x, y + h), pes + h * h2, ("tile", l, h, h2, t, x, y, +1), key)
                if phase == "W" and x - h >= 0:
                    put(("E", h2, x, y + h), pes + h * h2, ("tile", l, h, h2, t, x - h, y + h, -1), key)
        states = nxt
        if not states:
            return None
        # keep the layers' tables apart for the walk back
        plan.tables.append(states)
    best = max(states.values(), key=lambda v: v[0])
    return best


plan.tables = []


def walk(best):
    """The steps of the best plan, first stage first."""
    steps, pointer, l = [], best[1], STAGES - 1
    while pointer is not None:
        prev, step = pointer
        steps.append(step)
        if l == 0:
            break
        pointer = plan.tables[l - 1][prev][1]
        l -= 1
    return steps[::-1]


def check_geometry(steps, band_length, stack):
    """Every region and fold square inside the fabric and disjoint; returns the PEs in regions."""
    cells = set()
    pes = 0

    def take(x0, y0, w, h, what):
        assert 0 <= x0 and x0 + w <= band_length and 0 <= y0 and y0 + h <= stack, what
        for yy in range(y0 // 8, (y0 + h) // 8):
            for xx in range(x0 // 8, (x0 + w) // 8):
                assert (xx, yy) not in cells, what
                cells.add((xx, yy))

    for kind, l, r, c, t, x, y, d in steps:
        if kind == "straight":
            take(x, y, c, r, f"stage {l}")
            pes += r * c
        elif d > 0:  # east end: the tile in the band, the fold square below it
            take(x, y, c, r, f"stage {l}")
            take(x, y + r, c, c, f"square after {l}")
            pes += r * c
        else:  # west end: the square in the band, the tile below it
            take(x, y - r, r, r, f"square before {l}")
            take(x, y, r, c, f"stage {l}")
            pes += r * c
    return pes


def balanced_fill(target, band_length, stack, ratio=1.25):
    """The most PEs a plan holds with every stage within `target` and the stages' sum at least
    48 * target / ratio (so its bottleneck is at most `ratio` times its mean): the same moves
    as `plan`, each state keeping the Pareto front of (sum of stage times, PEs). Returns
    (PEs, sum of stage times) or None."""
    need = STAGES * target / ratio
    lengths = {h: [c for c in range(8, band_length + 1, 8) if c % h == 0 or h % c == 0]
               for h in HEIGHTS}
    states = {("E", h, 0, 0): {0: 0} for h in HEIGHTS if h <= stack}
    for l in range(STAGES):
        nxt = {}
        room = (STAGES - 1 - l) * target  # the most the later stages can add to the sum

        def put(key, front, t, area):
            into = nxt.setdefault(key, {})
            for total, pes in front.items():
                if total + t + room >= need and into.get(total + t, -1) < pes + area:
                    into[total + t] = pes + area

        for (phase, h, x, y), front in states.items():
            for c in lengths[h]:
                t = straight_time(l, h, c)
                if t is None or t > target:
                    continue
                if phase == "E" and x + c <= band_length:
                    put(("E", h, x + c, y), front, t, h * c)
                if phase != "E" and x - c >= h:
                    put(("W", h, x - c, y), front, t, h * c)
            if phase == "W0":
                continue
            for h2 in HEIGHTS:
                t = tile_time(l, h, h2)
                if t is None or t > target or y + h + h2 > stack:
                    continue
                if phase == "E" and x + h2 <= band_length:
                    put(("W0", h2, x, y + h), front, t, h * h2)
                if phase == "W" and x - h >= 0:
                    put(("E", h2, x, y + h), front, t, h * h2)
        states = {}
        for key, front in nxt.items():  # keep only the entries no other one beats on both
            kept, best = {}, -1
            for total in sorted(front, reverse=True):
                if front[total] > best:
                    kept[total], best = front[total], front[total]
            if kept:
                states[key] = kept
    ends = [(pes, total) for front in states.values() for total, pes in front.items()]
    return max(ends) if ends else None


def describe(steps, vertical):
    """One line per band: where it lies, its heading and its stages (length:cycles along the
    band; Tr x c:cycles for a turning tile, listed with the band whose rows it holds)."""
    across, along = ("columns", ("south", "north")) if vertical else ("rows", ("east", "west"))
    bands = {}
    for kind, l, r, c, t, x, y, d in steps:
        name = f"{c}:{t}" if kind == "straight" else f"T{r}x{c}:{t}"
        heading = d if kind == "straight" else +1  # both turning tiles lie in eastward bands
        bands.setdefault(y, [heading, []])[1].append(name)
    for y, (d, items) in sorted(bands.items()):
        print(f"      {across} {y:>3}-: {along[0] if d > 0 else along[1]:5} {' '.join(items)}")


def report(weight, target, band_length, stack):
    """The best plan for a weight of the stage times against the PEs: (fill, max, mean, steps)."""
    plan.tables = []
    best = plan(target, band_length, stack, weight)
    if best is None:
        return None
    steps = walk(best)
    pes = check_geometry(steps, band_length, stack)
    times = [s[4] for s in steps]
    return pes / LIVE, max(times), sum(times) / len(times), steps


def main():
    global STRAIGHT_C_BELOW_R
    parser = argparse.ArgumentParser()
    parser.add_argument("--table", help="the size search's candidate table to check against")
    parser.add_argument("--c-below-r", action="store_true",
                        help="a hypothetical dense_straight that also allows R % C == 0")
    parser.add_argument("--targets", default="50:94:4", help="stage targets first:last:step")
    parser.add_argument("--vertical-only", action="store_true")
    parser.add_argument("--balanced", action="store_true",
                        help="also the most PEs at <= 1.25x, searched exactly (slow: ~1 min a target)")
    parser.add_argument("--show", type=int, default=0, help="print the plans at this target")
    args = parser.parse_args()
    STRAIGHT_C_BELOW_R = args.c_below_r
    if args.table:
        check_table(args.table)
    first, last, step = map(int, args.targets.split(":"))
    found = []
    for name, band_length, stack in [("vertical", H, W), ("horizontal", W, H)]:
        if args.vertical_only and name != "vertical":
            continue
        print(f"{name} bands ({band_length} long, stacked over {stack}); per stage target the "
              "plans that weigh a cycle of the stages' sum as 0, 300, 1,000 and 10^6 PEs "
              "(fill, bottleneck/mean):")
        for target in range(first, last + 1, step):
            line = []
            for weight in (0, 300, 1000, 10**6):
                r = report(weight, target, band_length, stack)
                if r is None:
                    line.append("-")
                    continue
                fill, top, mean, steps = r
                line.append(f"{100 * fill:.1f}% {top}/{mean:.0f} {top / mean:.2f}x")
                if fill >= 0.8 and top <= 1.25 * mean:
                    found.append((name, target, weight, fill, top, mean))
                if args.show == target:
                    print(f"    weight {weight}: {100 * fill:.1f}%, {top}/{mean:.1f}")
                    describe(steps, name == "vertical")
            if args.balanced:
                b = balanced_fill(target, band_length, stack)
                line.append("at <= 1.25x: " + (
                    f"{100 * b[0] / LIVE:.1f}% (mean {b[1] / STAGES:.1f})" if b else "none"))
                if b and b[0] >= 0.8 * LIVE:
                    found.append((name, target, "balanced", b[0] / LIVE))
            print(f"  T={target}: " + " | ".join(line), flush=True)
    print("plans with >= 80% and <= 1.25x:", found or "none")


if __name__ == "__main__":
    main()
