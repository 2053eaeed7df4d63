"""What 1% dead PEs leave for map96's regions on WSE-2 (BENCHMARKS.md, "Mapping", session 28).

Rebuilds the bench's defect map (`wsel_map::fixtures::scatter_dead_pes`: 7,455 PEs of the
750 × 994 fabric from the same xorshift and seed) and prints, for a few region shapes, how many
positions hold no dead PE; the largest defect-free rectangle; and, for regions that would lay
each row's logical columns on that row's live PEs in order, the spare columns `k` such a
region needs (the most dead PEs among a row's first `C + k` PEs), over a grid of windows.

Usage (from the repository root): python3 benches/map96_defects.py
"""

import numpy as np

WIDTH, HEIGHT = 750, 994
DEAD, SEED = 7_455, 0x2545_F491_4F6C_DD1D
MASK = (1 << 64) - 1


def scatter_dead_pes(n, seed):
    """The dead PEs of `fixtures::scatter_dead_pes`, as a HEIGHT × WIDTH grid of 0/1."""
    dead = set()
    while len(dead) < n:
        seed ^= (seed << 13) & MASK
        seed ^= seed >> 7
        seed ^= (seed << 17) & MASK
        dead.add((seed % WIDTH, (seed >> 32) % HEIGHT))
    grid = np.zeros((HEIGHT, WIDTH), dtype=np.int32)
    for x, y in dead:
        grid[y, x] = 1
    return grid


def clean_positions(prefix, w, h):
    """How many `w × h` rectangles on the fabric hold no dead PE."""
    counts = prefix[h:, w:] - prefix[:-h, w:] - prefix[h:, :-w] + prefix[:-h, :-w]
    return int((counts == 0).sum()), counts.size


def largest_clean_rectangle(grid):
    """Area and (x, y, w, h) of the largest rectangle without a dead PE (histogram method)."""
    best = (0, None)
    heights = np.zeros(WIDTH, dtype=np.int64)
    for y in range(HEIGHT):
        heights = np.where(grid[y] == 0, heights + 1, 0)
        stack = []
        for x in range(WIDTH + 1):
            h = int(heights[x]) if x < WIDTH else 0
            start = x
            while stack and stack[-1][1] >= h:
                s, sh = stack.pop()
                if sh * (x - s) > best[0]:
                    best = (sh * (x - s), (s, y - sh + 1, x - s, sh))
                start = s
            stack.append((start, h))
    return best


def spare_columns(grid, rows, cols, slack=16):
    """Per window of `rows` rows and `cols + slack` columns: the spare columns its rows need."""
    out = []
    for y0 in range(0, HEIGHT - rows, 97):
        for x0 in range(0, WIDTH - cols - slack, 61):
            live = np.cumsum(1 - grid[y0 : y0 + rows, x0 : x0 + cols + slack], axis=1)
            out.append(max(int(np.argmax(r >= cols)) + 1 - cols for r in live))
    return np.array(out)


def main():
    grid = scatter_dead_pes(DEAD, SEED)
    prefix = np.zeros((HEIGHT + 1, WIDTH + 1), dtype=np.int64)
    prefix[1:, 1:] = grid.cumsum(0).cumsum(1)
    print(f"dead PEs: {grid.sum()}")
    for w, h in [(8, 8), (16, 16), (16, 32), (32, 32), (32, 64), (64, 64), (64, 128)]:
        clean, total = clean_positions(prefix, w, h)
        print(f"{w} x {h}: {clean} of {total} positions clean ({100 * clean / total:.3g}%)")
    area, rect = largest_clean_rectangle(grid)
    print(f"largest clean rectangle: {area} PEs at (x, y, w, h) = {rect}")
    for rows, cols in [(64, 128), (128, 256), (256, 64), (128, 96)]:
        k = spare_columns(grid, rows, cols)
        print(f"{rows} x {cols}: spare columns median {np.median(k):g}, max {k.max()}")


if __name__ == "__main__":
    main()
