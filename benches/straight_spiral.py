"""How much of wse2 a chain of straight dense regions can cover laid as a spiral of bands
(BENCHMARKS.md, "A dense that runs straight", session 30), computed by hand from the sizes the
size search chose, independently of the mapper.

Usage: python3 benches/straight_spiral.py

Every region of a chain of `dense_straight` layers is R rows high (R = 64 in map96), so the
chain is a band R PEs high and each region a length C along it. Laid as a spiral from the
north-west corner (east along the top, south down the east side, west, north, then the next
ring R further in), each side of a ring ends in the R x R square where the band folds a
quarter turn, and takes whole regions in the chain's order: the first region that does not
fit in what is left of a side starts the next side. Prints, per rung of the size ladder, how many of the
48 layers such a spiral holds and the PEs in them.
"""

R, W, H = 64, 750, 994
LIVE = W * H

# The six repeating region lengths (columns of R = 64 rows) of the least-area sizes at two
# rungs of the size ladder (stage targets 47–56 and 65–70; printed from the search, session 30).
UNITS = {
    47: [64, 512, 256, 64, 64, 128],
    65: [64, 256, 256, 64, 64, 64],
}


def sides():
    """The spiral's sides, outermost ring first: the band's length along each."""
    x0, y0, x1, y1 = 0, 0, W, H
    while x1 - x0 >= R and y1 - y0 >= R:
        yield x1 - x0  # along the north edge, east
        yield y1 - y0 - R  # down the east side, below the first corner's square
        yield x1 - x0 - R  # along the south, west
        yield y1 - y0 - 2 * R  # up the west side, a band short of the ring's top
        x0, y0, x1, y1 = x0 + R, y0 + R, x1 - R, y1 - R


def pack(lengths):
    """The layers a spiral holds in order, and their PEs."""
    i, placed = 0, 0
    for side in sides():
        room = side - R  # the fold square at the side's end
        while i < len(lengths) and lengths[i] <= room:
            room -= lengths[i]
            placed += lengths[i] * R
            i += 1
        if i == len(lengths):
            break
    return i, placed


if __name__ == "__main__":
    for target, unit in UNITS.items():
        lengths = (unit * 8)[:48]
        layers, placed = pack(lengths)
        need = sum(lengths) * R
        print(
            f"rung {target}: {need:,} PEs in regions ({100 * need / LIVE:.1f}%); "
            f"the spiral holds {layers} of 48 layers, {placed:,} PEs ({100 * placed / LIVE:.1f}%)"
        )
