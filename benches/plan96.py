"""Is there a layout of map96 on wse2 with >= 80% of the PEs in regions and the bottleneck
stage <= 1.25x the mean? A layout planner in miniature, independent of the mapper's placer
(BENCHMARKS.md, "A plan for map96", session 30, and "Layouts of map96 beyond the
boustrophedon", session 31).

Usage: python3 benches/plan96.py [--turns] [--jogs] [--down] [--rev-tile] [--c-below-r]
       [--balanced [--floor 75]] [--targets 50:94:4] [--weights 0,300,1000,1000000]
       [--show T [--defects]] [--vertical-only] [--self-check] [--table FILE]

The chain: 48 fused `dense + relu` stages, stage l maps N = WIDTHS[l % 6] to M = WIDTHS[(l+1)
% 6]. Each stage is a `dense_tile` (x in on one side, y out of the next side round: it turns
the chain) or a `dense_straight` (x in west, y out east on the same rows: it does not). Its
time on R x C is the mapper's estimate (compiler/map/src/estimate.rs; for these layer graphs
the work is the multiply-adds spread over the PEs, `ceil(flops / 2 / (R C))`, fma rate 1):

    tile      N/R + ceil(work / (R C)) + M/C            (N % R == 0, M % C == 0)
    straight  N/R + ceil(work / (R C)) + ceil(M/R)      (C % R == 0, N % C == 0, R <= M)

checked against every candidate of the size search's table with `--table` (dumped from
`search::Problem` by a throwaway test, not kept; session 30's dump took the last dense apart
from its relu, the bench fuses it too: work N M + M for all 48 stages).

The layout: bands across the fabric's shorter side (or its longer one, `vertical`), laid one
below the other. A band of height h holds straight stages with R = h (their lengths C along
it). How the chain turns (docs/mapping.md section 2) follows from the parts' order: call a
chain's chirality R when the parts' index grows to the right of its heading (what a rotation
takes) and L otherwise. A straight keeps heading and chirality; a tile turns right on R and
left on L and flips the chirality; a fold turns a quarter either way and keeps it. So an
eastward band (R) turns down with a tile, a westward one (L) too, and tiles alternate right
and left: two tiles in a row step the band down and on (a jog), never back. Every U-turn needs
a fold (session 30's, the default family):

    east end:  ... straights | TILE (h x h')      band k,   rows y .. y+h
          ... straights west | SQUARE (h' x h')   band k+1, the fold of the tile's h' parts
    west end:  SQUARE (h x h) | straights ...     band k+1, the fold of the band's h parts
               TILE (h x h')  | straights east    band k+2, rows below: the next band's height

`--turns` also allows the other order at each end (fold then tile at the east end, tile then
fold at the west end, two folds); `--jogs` a band stepping down by a tile (or fold) and a tile
(or fold) turning it on, the rows it left above and below empty; `--down` straight stages
heading down between a turn's two elements; `--rev-tile` a hypothetical `dense_tile` giving
its parts in reverse order (column c computes y's part C-1-c: it turns like a tile but keeps
the chirality), so a U-turn of two tiles with no fold square. `--c-below-r` lets a straight
stage also take C < R with R % C == 0 (built this session by helper `square`; same estimate).

A dynamic programme over the stages and a state (heading, chirality, parts, chain head x, y;
after a band's first turning element, what it was) finds, for a stage target T (every stage
within it) and a weight w, the plan with the most PEs in regions + w x the sum of the stage
times (w = 0: the fullest; w = 10^6: the largest mean, exactly). `--balanced` keeps per state
the Pareto front of (sum of stage times, PEs) of the plans whose sum can still reach 48 T /
1.25 and whose PEs plus the fabric not yet behind them can reach `--floor` % of it: exactly
the most PEs of any plan of the family with every stage within T and the bottleneck at most
1.25x the mean, when that is at least the floor (the bench's measure: the largest stage
estimate over the mean of the 48). Every plan printed is checked from its rectangles alone
(`check_plan`: inside the fabric, disjoint, each input edge the whole output edge before it,
the turns its chirality allows; `--self-check` shows it rejecting bad chains). `--defects`
lays the bench's 1% dead PEs over the plans shown.
"""

import argparse
import math
from collections import namedtuple

WIDTHS = [256, 512, 1024, 384, 128, 768]
STAGES = 48
W, H = 750, 994  # wse2: columns, rows
LIVE = W * H
SRAM_WORDS = 48 * 1024 // 4
HEIGHTS = [16, 24, 32, 48, 64, 96, 128]  # band heights tried: straight R values (R | N, R <= 128)


def shape(l):
    n, m = WIDTHS[l % 6], WIDTHS[(l + 1) % 6]
    # flops / 2: the dense's multiply-adds and bias, and the relu fused in (the bench appends a
    # relu to the last dense as well: 48 fused stages; session 30 took the last one apart).
    return n, m, n * m + m


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


FLIP = {"R": "L", "L": "R"}
# A laid element (a plain tuple while searched): a stage (kind "straight", "tile" or "rev")
# or a fold square (stage None, r = c its parts, no cycles); `head` the heading it was laid
# in, `rect` (x, y, w, h) in band terms.
Step = namedtuple("Step", "kind stage r c cycles head rect")
# Session 30's U-turns, (band heading, first element, second): at the east end the turning
# tile then the fold square below it, at the west end the fold square then the tile below it.
BASE = {("E", "tile", "fold"), ("W", "fold", "tile")}


class Moves:
    """Which turns a family may lay: the (band heading, first, second element, result) it
    allows, result "U" a U-turn and "J" a jog (the band steps down and goes on)."""

    def __init__(self, turns=False, jogs=False, rev=False, down=False):
        kinds = ("tile", "fold", "rev") if rev else ("tile", "fold")
        self.allowed = {
            (came, a, b, result)
            for came in "EW" for a in kinds for b in kinds for result in "UJ"
            if (result == "U" and (came, a, b) in BASE)
            or (result == "U" and (turns or "rev" in (a, b)))
            or (result == "J" and jogs)
        }
        self.firsts = {(came, a) for came, a, _, _ in self.allowed}
        self.folds = {"S"} | {came for came, a in self.firsts if a == "fold"}
        self.rev, self.down = rev, down


class Fabric:
    """The fabric as a layout sees it, `length` along the bands and `stack` across them, and
    per stage the sizes within a stage target: straights (R, length) and tiles (R, C)."""

    def __init__(self, length, stack, target):
        self.length, self.stack, self.target = length, stack, target
        ok = lambda t: t is not None and t <= target
        longest = range(8, max(length, stack) + 1, 8)
        self.straights = [{n: [(c, t) for c in longest for t in [straight_time(l, n, c)] if ok(t)]
                           for n in HEIGHTS} for l in range(STAGES)]
        self.tiles = [{n: [(c, t) for c in HEIGHTS for t in [tile_time(l, n, c)] if ok(t)]
                       for n in HEIGHTS} for l in range(STAGES)]


# A state: (heading, came, first, chirality, parts, x, y). Heading "E" or "W" along a band of
# `parts` rows from y, the chain's head at x ("W0": a westward band before its first straight,
# which may not turn yet); "S" down across the bands, `parts` columns from x, the head at y,
# after `first` ended a band heading `came`. Chirality "R": the parts' index grows to the
# right of the heading (a rotation takes them), "L": to its left (a reflection).


def stage_moves(l, key, fab, moves):
    """The ways to lay stage l from `key`: (next state, cycles, PEs, Step)."""
    head, came, first, chi, n, x, y = key
    for c, t in fab.straights[l][n]:
        if head == "E" and x + c <= fab.length:
            yield (("E", None, None, chi, n, x + c, y), t, n * c,
                   ("straight", l, n, c, t, "E", (x, y, c, n)))
        elif head in ("W", "W0") and x - c >= n:
            yield (("W", None, None, chi, n, x - c, y), t, n * c,
                   ("straight", l, n, c, t, "W", (x - c, y, c, n)))
        elif head == "S" and moves.down and y + c <= fab.stack:
            yield (("S", came, first, chi, n, x, y + c), t, n * c,
                   ("straight", l, n, c, t, "S", (x, y, n, c)))
    for kind in ("tile", "rev") if moves.rev else ("tile",):
        out = chi if kind == "rev" else FLIP[chi]  # the chirality of the tile's output
        for c, t in fab.tiles[l][n]:
            if head == "E" and chi == "R" and ("E", kind) in moves.firsts and x + c <= fab.length:
                yield (("S", "E", kind, out, c, x, y + n), t, n * c,
                       (kind, l, n, c, t, "E", (x, y, c, n)))
            elif head in ("W", "W0") and chi == "L" and ("W", kind) in moves.firsts and x >= c:
                yield (("S", "W", kind, out, c, x - c, y + n), t, n * c,
                       (kind, l, n, c, t, "W", (x - c, y, c, n)))
            elif head == "S" and y + c <= fab.stack:
                to = "W" if chi == "R" else "E"  # a rotation turns right, a reflection left
                new = leave_down(came, first, kind, to, out, c, x, y, n, moves)
                if new:
                    yield new, t, n * c, (kind, l, n, c, t, "S", (x, y, n, c))


def leave_down(came, first, second, to, chi, parts, x, y, width, moves):
    """The band state after a downward run `width` wide at x ends heading `to` (None when the
    family does not allow that turn)."""
    result = "J" if to == came else "U"
    if (came, first, second, result) not in moves.allowed:
        return None
    if to == "W":
        return ("W0" if result == "U" else "W", None, None, chi, parts, x, y)
    return ("E", None, None, chi, parts, x + width, y)


def fold_moves(key, fab, moves):
    """The folds from `key` (they lay no stage): (next state, Step)."""
    head, came, first, chi, n, x, y = key
    if head == "E" and ("E", "fold") in moves.firsts and x + n <= fab.length:
        yield ("S", "E", "fold", chi, n, x, y + n), ("fold", None, n, n, 0, "E", (x, y, n, n))
    elif head == "W" and ("W", "fold") in moves.firsts and x >= n:
        yield (("S", "W", "fold", chi, n, x - n, y + n),
               ("fold", None, n, n, 0, "W", (x - n, y, n, n)))
    elif head == "S" and y + n <= fab.stack:
        for to in "EW":
            new = leave_down(came, first, "fold", to, chi, n, x, y, n, moves)
            if new:
                yield new, ("fold", None, n, n, 0, "S", (x, y, n, n))


def search(fab, moves, value):
    """The dynamic programme over the stages: every state's value after each stage (`value`
    says what a value is: the best weighted score, or a Pareto front), then the folds from
    the band states and from the downward ones (at most two in a row). Returns the chain of
    steps `value` finds best, or None."""
    states = {("E", None, None, "R", h, 0, 0): value.start() for h in HEIGHTS if h <= fab.stack}
    for l in range(STAGES):
        nxt = {}
        for key, v in states.items():
            for new, t, area, step in stage_moves(l, key, fab, moves):
                value.merge(nxt, new, value.extend(v, t, area, step, l), fab)
        for heads in ("EW", "S"):
            for key in [k for k in nxt if k[0] in heads and k[0] in moves.folds]:
                for new, step in fold_moves(key, fab, moves):
                    value.merge(nxt, new, value.extend(nxt[key], 0, 0, step, l), fab)
        states = value.prune(nxt)
        if not states:
            return None
    return value.best(states)


class Weighted:
    """A value: (PEs + weight x the stages' sum, chain of steps); the largest score wins."""

    def __init__(self, weight):
        self.weight = weight

    def start(self):
        return 0, None

    def extend(self, v, t, area, step, l):
        return v[0] + area + self.weight * t, (step, v[1])

    def merge(self, into, key, v, fab):
        if key not in into or into[key][0] < v[0]:
            into[key] = v

    def prune(self, states):
        return states

    def best(self, states):
        return max(states.values(), key=lambda v: v[0])[1]


def behind(key, fab):
    """The PEs no later element can take: every element lies on rows at or below the chain
    head's band (or downward run), and in the band's rows only ahead of the head."""
    head, _, _, _, n, x, y = key
    if head == "S":
        return y * fab.length
    return y * fab.length + n * (x if head == "E" else fab.length - x)


class Balanced:
    """A value: the Pareto front {stages' sum: (PEs, chain)} of the plans whose sum can still
    reach 48 x target / ratio (their bottleneck, at most the target, then at most `ratio` x
    their mean) and whose PEs plus the fabric not yet behind them can still reach `floor`; the
    most PEs at the end wins: exactly the fullest plan within the ratio, when it holds at least
    `floor` PEs (None otherwise)."""

    def __init__(self, target, floor, ratio=1.25):
        self.target, self.need, self.floor = target, STAGES * target / ratio, floor

    def start(self):
        return {0: (0, None)}

    def extend(self, front, t, area, step, l):
        room = (STAGES - 1 - l) * self.target  # the most the later stages can add to the sum
        return {total + t: (pes + area, (step, chain)) for total, (pes, chain) in front.items()
                if total + t + room >= self.need}

    def merge(self, into, key, front, fab):
        least = self.floor - (fab.length * fab.stack - behind(key, fab))
        front = {total: v for total, v in front.items() if v[0] >= least}
        if front:
            got = into.setdefault(key, {})
            for total, v in front.items():
                if total not in got or got[total][0] < v[0]:
                    got[total] = v

    def prune(self, states):
        """Keeps the entries no other entry of their state beats on both sum and PEs."""
        out = {}
        for key, front in states.items():
            kept, best = {}, -1
            for total in sorted(front, reverse=True):
                if front[total][0] > best:
                    kept[total], best = front[total], front[total][0]
            out[key] = kept
        return out

    def best(self, states):
        ends = [v for front in states.values() for v in front.values()]
        return max(ends, key=lambda v: v[0])[1] if ends else None


def walk(chain):
    """The steps of a chain, first stage first."""
    steps = []
    while chain is not None:
        step, chain = chain
        steps.append(Step._make(step))
    return steps[::-1]


SIDES = "NESW"  # clockwise
OPPOSITE = {"N": "S", "S": "N", "E": "W", "W": "E"}


def edge(rect, side):
    """The segment of a rectangle's side: (axis, line, from, to)."""
    x, y, w, h = rect
    return {"N": ("y", y, x, x + w), "S": ("y", y + h, x, x + w),
            "W": ("x", x, y, y + h), "E": ("x", x + w, y, y + h)}[side]


def check_plan(steps, fab):
    """Checks a plan from its rectangles alone and returns its PEs in regions: every element
    inside the fabric and disjoint; each one's input edge the whole output edge of the one
    before (part for part: as long as its R, or its producer's parts); straights keep the
    heading, folds turn a quarter either way, tiles turn right while the parts' index grows to
    the heading's right (a rotation) and left otherwise, flipping that (a reversed tile keeps
    it); the first stage fed on its west edge at the fabric's edge, as a rotation."""
    cells, pes = set(), 0
    for s in steps:
        x, y, w, h = s.rect
        assert 0 <= x and x + w <= fab.length and 0 <= y and y + h <= fab.stack, s
        for cell in [(i, j) for i in range(x // 8, (x + w) // 8)
                     for j in range(y // 8, (y + h) // 8)]:
            assert cell not in cells, s
            cells.add(cell)
        pes += w * h if s.kind != "fold" else 0
    assert steps[0].rect[0] == 0, "the first stage is fed from the fabric's west edge"
    chi, side_in = "R", "W"
    for s, after in zip(steps, steps[1:] + [None]):
        along = lambda side: s.rect[3] if side in "EW" else s.rect[2]
        assert along(side_in) == s.r, s
        if after is not None:
            out = [d for d in SIDES if edge(s.rect, d) == edge(after.rect, OPPOSITE[d])]
            assert len(out) == 1, (s, after)
            turn = (SIDES.index(out[0]) - SIDES.index(OPPOSITE[side_in])) % 4
            if s.kind == "straight":
                assert turn == 0 and along(out[0]) == s.r, s
            elif s.kind == "fold":
                assert turn in (1, 3) and along(out[0]) == s.r, s
            else:
                assert turn == (1 if chi == "R" else 3) and along(out[0]) == s.c, (s, chi)
            side_in = OPPOSITE[out[0]]
        chi = FLIP[chi] if s.kind == "tile" else chi
    return pes


def self_check():
    """`check_plan` on hand-laid chains: a jog (a tile turning down, one turning on) passes; a
    U-turn of two tiles, a tile fed the wrong number of parts and two regions on one PE fail."""
    fab = Fabric(H, W, 0)
    run = lambda *rect: Step("straight", 0, rect[3], rect[2], 0, "E", rect)
    jog = [run(0, 0, 64, 64), Step("tile", 1, 64, 32, 0, "E", (64, 0, 32, 64)),
           Step("tile", 2, 32, 16, 0, "S", (64, 64, 32, 16)), run(96, 64, 16, 16)]
    assert check_plan(jog, fab) == 64 * 64 + 64 * 32 + 32 * 16 + 16 * 16
    two_tiles = jog[:3] + [Step("straight", 3, 16, 16, 0, "W", (48, 64, 16, 16))]
    wrong_parts = jog[:2] + [Step("tile", 2, 16, 16, 0, "S", (64, 64, 16, 16))]
    overlap = jog[:3] + [run(88, 64, 16, 16)]
    for bad in (two_tiles, wrong_parts, overlap):
        try:
            check_plan(bad, fab)
        except AssertionError:
            continue
        raise SystemExit(f"check_plan passed a bad plan: {bad}")
    print("check_plan: a jog passes; a U-turn of two tiles, wrong parts and an overlap fail")


def describe(steps, vertical):
    """One line per band (where it lies, its heading) and its elements in chain order:
    length:cycles for a straight, Tr×c:cycles for a turning tile (Vr×c a reversed one), Fn a
    fold square of n parts; a "v" marks what was laid heading down across the bands."""
    across, along = (("cols", {"E": "south", "W": "north"}) if vertical
                     else ("rows", {"E": "east", "W": "west"}))
    lines, band = [], None
    for s in steps:
        if s.kind == "straight" and s.head in "EW" and band != (s.head, s.rect[1]):
            band = (s.head, s.rect[1])
            lines.append([f"{across} {s.rect[1]:>3}-{s.rect[1] + s.r - 1:<3} {along[s.head]:5}"])
        name = {"straight": f"{s.c}:{s.cycles}", "tile": f"T{s.r}x{s.c}:{s.cycles}",
                "rev": f"V{s.r}x{s.c}:{s.cycles}", "fold": f"F{s.r}"}[s.kind]
        if not lines:
            lines.append([f"{across}   0-    {along['E']:5}"])
        lines[-1].append(("v" if s.head == "S" else "") + name)
    for line in lines:
        print("      " + " ".join(line))


def defects(steps, vertical):
    """What the map96 bench's 1% dead PEs (`benches/map96_defects.py`: the same generator, seed
    and count) do to a plan: its regions and fold squares that hold a dead PE, and, were each
    region to lay every line along its band on that line's live PEs (a dead PE skipped, the
    link across it two hops), how much longer its lines must be (k, the most dead PEs on one
    line of its span, the span grown until it holds them), the PEs that takes, and the bands
    whose stages and squares then no longer fit their length."""
    from map96_defects import DEAD, SEED, scatter_dead_pes
    grid = scatter_dead_pes(DEAD, SEED)
    band = grid.T if vertical else grid  # band[y, x]: y across the bands, x along them
    length = band.shape[1]
    dirty, squares, ks, extra, grown = 0, 0, [], 0, []
    for s in steps:
        x, y, w, h = s.rect
        if s.kind == "fold":
            squares += bool(band[y:y + h, x:x + w].any())
            grown.append(0)
            continue
        dirty += bool(band[y:y + h, x:x + w].any())
        k = 0
        while k != (k := int(band[y:y + h, x:x + w + k].sum(axis=1).max())):
            pass
        ks.append(k)
        grown.append(k)
        extra += k * h
    bands = {}  # a band's rows: the length its elements take, grown
    for s in steps:
        if s.kind == "straight" and s.head in "EW":
            bands[(s.rect[1], s.r)] = 0
    for s, k in zip(steps, grown):
        x, y, w, h = s.rect
        for top, rows in bands:
            if top <= y and y + h <= top + rows:
                bands[(top, rows)] += w + k
    over = [used - length for used in bands.values() if used > length]
    ks.sort()
    folds = sum(s.kind == "fold" for s in steps)
    pes = sum(s.rect[2] * s.rect[3] for s in steps if s.kind != "fold")
    print(f"    1% dead ({DEAD}; the plan's PEs are {100 * pes / (LIVE - DEAD):.1f}% of the live): "
          f"{dirty} of {len(ks)} regions and {squares} of {folds} fold "
          f"squares hold dead PEs; lines on live PEs need k = {ks[len(ks) // 2]} (median), "
          f"{ks[-1]} (max) more PEs a line: +{extra:,} PEs ({100 * extra / (LIVE - DEAD):.1f}% "
          f"of the live); {len(over)} of {len(bands)} bands then overflow"
          + (f" (by up to {max(over)})" if over else ""))


Result = namedtuple("Result", "pes top mean steps")


def evaluate(fab, moves, value):
    """The plan `value` finds best, checked: Result or None."""
    chain = search(fab, moves, value)
    if chain is None:
        return None
    steps = walk(chain)
    pes = check_plan(steps, fab)
    times = [s.cycles for s in steps if s.kind != "fold"]
    assert len(times) == STAGES
    return Result(pes, max(times), sum(times) / STAGES, steps)


def show(label, r, vertical, dead):
    print(f"    {label}: {100 * r.pes / LIVE:.1f}% ({r.pes:,} PEs), {r.top}/{r.mean:.1f} "
          f"({r.top / r.mean:.2f}x)")
    describe(r.steps, vertical)
    if dead:
        defects(r.steps, vertical)


def main():
    global STRAIGHT_C_BELOW_R
    parser = argparse.ArgumentParser()
    parser.add_argument("--table", help="the size search's candidate table to check against")
    parser.add_argument("--c-below-r", action="store_true",
                        help="a hypothetical dense_straight that also allows R % C == 0")
    parser.add_argument("--turns", action="store_true",
                        help="U-turns with the tile or the fold first at either end")
    parser.add_argument("--jogs", action="store_true",
                        help="jogs: a band steps down (a tile or fold, a tile or fold) and on")
    parser.add_argument("--down", action="store_true",
                        help="straights heading down between a turn's two elements")
    parser.add_argument("--rev-tile", action="store_true",
                        help="a hypothetical dense_tile giving its parts in reverse order: "
                             "U-turns of two tiles")
    parser.add_argument("--targets", default="50:94:4", help="stage targets first:last:step")
    parser.add_argument("--weights", default="0,300,1000,1000000",
                        help="weights of a cycle of the stages' sum against a PE")
    parser.add_argument("--vertical-only", action="store_true")
    parser.add_argument("--balanced", action="store_true",
                        help="also the most PEs at <= 1.25x, exactly (slow: minutes a target)")
    parser.add_argument("--floor", type=float, default=75,
                        help="with --balanced: search only for plans holding at least this %% "
                             "of the PEs (the fabric ahead of a partial plan bounds it)")
    parser.add_argument("--show", type=int, default=0, help="print the plans at this target")
    parser.add_argument("--defects", action="store_true",
                        help="with --show: what the bench's 1%% dead PEs do to the plans shown")
    parser.add_argument("--self-check", action="store_true",
                        help="first check the plan checker on hand-laid chains")
    args = parser.parse_args()
    STRAIGHT_C_BELOW_R = args.c_below_r
    if args.self_check:
        self_check()
    if args.table:
        check_table(args.table)
    moves = Moves(args.turns, args.jogs, args.rev_tile, args.down)
    weights = [int(w) for w in args.weights.split(",") if w]
    first, last, step = map(int, args.targets.split(":"))
    found = []
    for name, band_length, stack in [("vertical", H, W), ("horizontal", W, H)]:
        if args.vertical_only and name != "vertical":
            continue
        print(f"{name} bands ({band_length} long, stacked over {stack}); per stage target the "
              f"plans that weigh a cycle of the stages' sum as {', '.join(map(str, weights))} "
              "PEs (fill, bottleneck/mean):")
        for target in range(first, last + 1, step):
            fab, line = Fabric(band_length, stack, target), []
            shown = args.show == target
            for weight in weights:
                r = evaluate(fab, moves, Weighted(weight))
                if r is None:
                    line.append("-")
                    continue
                line.append(f"{100 * r.pes / LIVE:.1f}% {r.top}/{r.mean:.0f} {r.top / r.mean:.2f}x")
                if r.pes >= 0.8 * LIVE and r.top <= 1.25 * r.mean:
                    found.append((name, target, weight, round(r.pes / LIVE, 3)))
                if shown:
                    show(f"weight {weight}", r, name == "vertical", args.defects)
            if args.balanced:
                r = evaluate(fab, moves, Balanced(target, args.floor / 100 * LIVE))
                line.append("at <= 1.25x: " + (
                    f"{100 * r.pes / LIVE:.1f}% ({r.pes:,}, {r.top}/{r.mean:.1f})" if r
                    else f"none of {args.floor:g}% or more"))
                if r and r.pes >= 0.8 * LIVE:
                    found.append((name, target, "balanced", round(r.pes / LIVE, 3)))
                if r and shown:
                    show("the fullest at <= 1.25x", r, name == "vertical", args.defects)
            print(f"  T={target}: " + " | ".join(line), flush=True)
    print("plans with >= 80% and <= 1.25x:", found or "none")


if __name__ == "__main__":
    main()
