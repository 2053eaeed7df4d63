"""Data and NumPy checks of the csl-examples ports (examples/csl/README.md).

    python3 csl.py data NAME            write NAME/data/*.npy (the vendor's run.py inputs)
    python3 csl.py check NAME Y.npy [REPORT.json]
                                        compare the fabric's result with the NumPy reference,
                                        with the vendor's tolerance; exit 1 on a mismatch
                                        (bandwidth-test: with the run's report, also its
                                        MB/s against the target's I/O model)

Every input is made as the vendor's run.py makes it (same seeds, same shapes), and every
check is the vendor's (`np.testing.assert_allclose` with its atol/rtol, or its norm test).
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, **arrays):
    folder = os.path.join(HERE, name, "data")
    os.makedirs(folder, exist_ok=True)
    for key, value in arrays.items():
        np.save(os.path.join(folder, key + ".npy"), np.ascontiguousarray(value, dtype=np.float32))


# ----------------------------------------------------------------------------------------
# gemv tutorials: A = arange (08: seeded random), x = 1, b = 2; y = A @ x + b
# ----------------------------------------------------------------------------------------

def gemv_inputs(m, n, seed=None):
    if seed is None:
        a = np.arange(m * n, dtype=np.float32).reshape(m, n)
    else:
        np.random.seed(seed)
        a = np.random.rand(m, n).astype(np.float32)
    x = np.full(n, 1.0, dtype=np.float32)
    b = np.full(m, 2.0, dtype=np.float32)
    return a, x, b


GEMV = {
    # name: (M, N, seed, tiles of y in the result)
    "gemv-01-complete-program": (4, 6, None, 1),
    "gemv-02-memory-dsds": (4, 6, None, 1),
    "gemv-03-memcpy": (4, 6, None, 1),
    "gemv-04-params": (4, 6, None, 1),
    "gemv-05-multiple-pes": (4, 6, None, 4),
    "gemv-06-routes-1": (4, 6, None, 1),
    "gemv-07-routes-2": (4, 6, None, 1),
    "gemv-08-routes-3": (6, 8, 7, 1),
    "gemv-09-streaming": (6, 8, None, 1),
}

GEMV_WIDTH = 4  # gemv-05: the program replicated on a row of 4 PEs


def gemv_data(name):
    m, n, seed, _ = GEMV[name]
    a, x, b = gemv_inputs(m, n, seed)
    if name in ("gemv-01-complete-program", "gemv-02-memory-dsds"):
        save(name, launch=np.zeros((1, 1)))
    elif name == "gemv-05-multiple-pes":
        # The host copies the same A, x, b to every PE of the row (np.tile in run.py).
        save(name, at=np.tile(a.T, GEMV_WIDTH), b=np.tile(b, GEMV_WIDTH),
             x=np.tile(x, GEMV_WIDTH)[None, :])
    elif name == "gemv-09-streaming":
        # x and b are streamed from the host: both are model inputs.
        save(name, at=a.T, b=b[None, :], x=x[None, :])
    elif name in ("gemv-03-memcpy", "gemv-04-params", "gemv-06-routes-1", "gemv-07-routes-2",
                  "gemv-08-routes-3", "gemv-09-streaming"):
        # A is stored column-major on the PEs: the file holds A^T, split [cols, rows].
        save(name, at=a.T, b=b, x=x[None, :])
    else:
        save(name, a=a, b=b, x=x[None, :])


def gemv_check(name, y):
    m, n, seed, tiles = GEMV[name]
    a, x, b = gemv_inputs(m, n, seed)
    expected = np.tile(a @ x + b, tiles)
    y = y.reshape(-1)
    if name == "gemv-08-routes-3":
        # run.py: the norm-wise relative error, below 1e-6; assert_allclose only when N < 10.
        relerr = np.linalg.norm(y - expected, np.inf) / (
            np.linalg.norm(a, np.inf) * np.linalg.norm(x, np.inf) + np.linalg.norm(b, np.inf))
        assert relerr < 1e-6, relerr
        np.testing.assert_allclose(y, expected)
    elif name in ("gemv-07-routes-2", "gemv-09-streaming"):
        np.testing.assert_allclose(y, expected)
    else:
        np.testing.assert_allclose(y, expected, atol=0.01, rtol=0)


# ----------------------------------------------------------------------------------------
# residual: |b - A x|_inf, M = 6, N = 4
# ----------------------------------------------------------------------------------------

def residual_inputs():
    m, n = 6, 4
    a = np.arange(m * n).reshape(m, n).astype(np.float32)
    x = np.arange(n).astype(np.float32) + 100
    b = np.arange(m).astype(np.float32) + 200
    return a, x, b


def residual_data(name):
    a, x, b = residual_inputs()
    save(name, at=a.T, x=x[None, :], b=b[None, :])


def residual_check(name, nrm):
    a, x, b = residual_inputs()
    nrm_r = np.linalg.norm(b - a @ x, np.inf)
    assert np.allclose(nrm_r, nrm.reshape(-1)[0], 1.e-5), (nrm_r, nrm)


# ----------------------------------------------------------------------------------------
# mandelbrot: 16 x 16 pixels, up to 32 iterations; exact
# ----------------------------------------------------------------------------------------

def mandelbrot_data(name):
    save(name, launch=np.zeros((1, 4)))


def mandelbrot_check(name, packets):
    from itertools import product
    rows, cols = 16, 16
    iters = packets.reshape((rows, cols, 3))[:, :, 2]
    ref = np.zeros((rows, cols))
    x_lo, x_hi = -2.0, 1.0
    y_lo, y_hi = -1.5, 1.5
    max_iters = 32
    for r, c in product(range(rows), range(cols)):
        x = c * (x_hi - x_lo) / (cols - 1) + x_lo
        y = r * (y_hi - y_lo) / (rows - 1) + y_lo
        val = np.csingle(x + y * 1j)
        for i in range(max_iters + 1):
            if abs(val) >= 2.0:
                break
            val = val * val + (x + y * 1j)
        ref[r, c] = i
    np.testing.assert_equal(ref, iters)


# ----------------------------------------------------------------------------------------
# single-tile-matvec: nb = 25 (padded to 28) on each of 2 x 2 PEs; atol 1e-4
# ----------------------------------------------------------------------------------------

STM_NB, STM_PADDED, STM_W, STM_H = 25, 28, 2, 2


def stm_inputs():
    # The vendor's run.py draws A and x unseeded; seeded here so that the data is fixed.
    np.random.seed(0)
    a = np.random.rand(STM_NB, STM_NB)
    x = np.random.rand(STM_NB)
    return a, x


def stm_data(name):
    a, x = stm_inputs()
    at = np.zeros((STM_NB, STM_PADDED), dtype=np.float32)   # column j of A, padded
    at[:, :STM_NB] = a.T
    x_data = np.zeros((STM_H, STM_W, STM_NB), dtype=np.float32)
    x_data[:, :] = x
    save(name, at=at, x=x_data[None])


def stm_check(name, y):
    a, x = stm_inputs()
    y_device_array = y.reshape((STM_H, STM_W, STM_PADDED))
    expected = a @ x
    for w in range(STM_W):
        for h in range(STM_H):
            np.testing.assert_allclose(y_device_array[h, w, :STM_NB], expected, atol=0.0001,
                                       rtol=0)


# ----------------------------------------------------------------------------------------
# gemv-collectives_2d: 32 x 16 on 4 x 4 PEs; atol 0.01
# ----------------------------------------------------------------------------------------

def c2d_inputs():
    np.random.seed(seed=7)
    a = np.random.rand(32, 16).astype(np.float32)
    x = np.random.rand(16).astype(np.float32)
    b = np.random.rand(32).astype(np.float32)
    return a, x, b


def c2d_data(name):
    a, x, b = c2d_inputs()
    # The SRAM the host's copies leave: x and b in PE (0, 0), zeros elsewhere.
    x_src = np.zeros((4, 4, 16), dtype=np.float32)
    x_src[0, 0] = x
    b_src = np.zeros((4, 4, 32), dtype=np.float32)
    b_src[0, 0] = b
    save(name, at=a.T, x_src=x_src, b_src=b_src, launch=np.zeros((1, 4)))


def c2d_check(name, y):
    a, x, b = c2d_inputs()
    np.testing.assert_allclose(y.reshape(-1), (a @ x) + b, atol=0.01, rtol=0)


# ----------------------------------------------------------------------------------------
# bandwidth-test (D2H): 5 x 5 PEs, 5 words each; MB/s against the target's I/O model
# ----------------------------------------------------------------------------------------

BW_H, BW_W, BW_LEN = 5, 5, 5
# The dev target's I/O model (runtime/target/src/presets.rs): host streams share 64 bytes
# per cycle, and one stream (here: one row's east edge) carries at most one 4-byte wavelet
# per cycle. 850 MHz is the clock the vendor's run.py converts cycles with.
DEV_HOST_IO_BYTES_PER_CYCLE = 64
CLOCK_MHZ = 850.0


def bw_data(name):
    a = np.arange(BW_H * BW_W * BW_LEN).reshape(BW_H, BW_W, BW_LEN).astype(np.float32)
    save(name, a=a, launch=np.zeros((1, BW_H)))


def bw_check(name, y, report=None):
    a = np.arange(BW_H * BW_W * BW_LEN).reshape(BW_H, BW_W, BW_LEN).astype(np.float32)
    np.testing.assert_equal(y.reshape(BW_H, BW_W, BW_LEN), a)
    if report is None:
        return
    cycles = report["run"]["task_span"]["cycles"]
    wvlts = BW_H * BW_W * BW_LEN
    time_send = (cycles / 0.85) * 1.e-3                     # us, as run.py
    bandwidth = ((wvlts * 4) / time_send) * 1               # MB/s, loop_count = 1
    model = min(DEV_HOST_IO_BYTES_PER_CYCLE, 4 * BW_H) * CLOCK_MHZ   # MB/s
    print(f"{name}: {cycles} cycles, {bandwidth:.1f} MB/s; the I/O model's bound "
          f"{model:.1f} MB/s ({100 * bandwidth / model:.1f}%)")
    assert bandwidth <= model, (bandwidth, model)


# ----------------------------------------------------------------------------------------
# 7pt-stencil-spmv: 5 x 5 x 5; rtol 1e-5
# ----------------------------------------------------------------------------------------

def stencil7_coeff(height, width):
    c = np.zeros((height, width, 7), dtype=np.float32)
    c[:, :] = [-1, -2, -3, -4, -5, -6, 6]   # west east south north bottom top center
    return c


def laplacian(stencil_coeff, zdim, x, y):
    # The vendor's util.laplacian.
    (height, width, _) = x.shape
    for i in range(height):
        for j in range(width):
            c_west, c_east, c_south, c_north, c_bottom, c_top, c_center = stencil_coeff[i, j]
            for k in range(zdim):
                west_buf = x[i, j - 1, k] if j > 0 else 0
                east_buf = x[i, j + 1, k] if j < width - 1 else 0
                north_buf = x[i - 1, j, k] if i > 0 else 0
                south_buf = x[i + 1, j, k] if i < height - 1 else 0
                bottom_buf = x[i, j, k - 1] if k > 0 else 0
                top_buf = x[i, j, k + 1] if k < zdim - 1 else 0
                y[i, j, k] = (c_west * west_buf + c_east * east_buf + c_south * south_buf +
                              c_north * north_buf + c_bottom * bottom_buf + c_top * top_buf +
                              c_center * x[i, j, k])


def spmv_data(name):
    h = w = z = 5
    x = np.arange(h * w * z).reshape(h, w, z).astype(np.float32) + 100
    save(name, x=x, coeff=stencil7_coeff(h, w), launch=np.zeros((1, h)))


def spmv_check(name, y):
    h = w = z = 5
    x = np.arange(h * w * z).reshape(h, w, z).astype(np.float32) + 100
    y_ref = np.zeros((h, w, z), dtype=np.float32)
    laplacian(stencil7_coeff(h, w), z, x, y_ref)
    np.testing.assert_allclose(y_ref.ravel(), y.ravel(), 1.0e-5)


# ----------------------------------------------------------------------------------------
# power-method: 5 x 5 x 5, max_ite = 1; rtol 1e-5
# ----------------------------------------------------------------------------------------

POWER_MAX_ITE = 1


def power_x0():
    h = w = z = 5
    x = np.arange(h * w * z).reshape(h, w, z).astype(np.float32) + 100
    return x / np.linalg.norm(x.ravel(), 2)


def power_data(name):
    save(name, x0=power_x0(), coeff=stencil7_coeff(5, 5), launch=np.zeros((1, 5)))


def power_check(name, xf):
    # The vendor's power_method.py, with A·x the stencil's (util.laplacian: the same matrix
    # as its CSR form, in (height, width, z) order).
    x = power_x0()
    coeff = stencil7_coeff(5, 5)
    for _ in range(POWER_MAX_ITE):
        y = np.zeros_like(x)
        laplacian(coeff, 5, x, y)
        x = y / np.linalg.norm(y.ravel(), 2)
    np.testing.assert_allclose(x.ravel(), xf.ravel(), 1.0e-5)


# ----------------------------------------------------------------------------------------
# bicgstab: 5 x 5 x 5, max_ite = 2; rtol 1e-5 against the vendor's bicgstab.py
# ----------------------------------------------------------------------------------------

BICG_MAX_ITE = 2


def bicg_inputs():
    h = w = z = 5
    x0 = np.zeros((h, w, z), dtype=np.float32)
    b = np.arange(h * w * z).reshape(h, w, z).astype(np.float32) + 1
    return x0, b


def bicg_data(name):
    x0, b = bicg_inputs()
    save(name, x0=x0, b=b, coeff=stencil7_coeff(5, 5), launch=np.zeros((1, 5)))


def bicgstab_ref(matvec, x0, b, max_ite, tol):
    # The vendor's bicgstab.py, with A_csr.dot as `matvec` (prints left out).
    k = 0
    x = np.copy(x0)
    y = matvec(x)
    r0 = b - y
    r = np.copy(r0)
    p = np.copy(r)
    xi = np.dot(r, r)
    rho = xi
    while (xi > tol * tol) and (k < max_ite):
        k = k + 1
        v = matvec(p)
        r0_dot_v = np.dot(r0, v)
        alpha = rho / r0_dot_v
        s = r - alpha * v
        t = matvec(s)
        t_dot_s = np.dot(t, s)
        t_dot_t = np.dot(t, t)
        w = t_dot_s / t_dot_t
        x = x + alpha * p + w * s
        r = s - w * t
        rho_old = rho
        rho = np.dot(r0, r)
        beta = (rho / rho_old) * (alpha / w)
        p = r + beta * (p - w * v)
        xi = np.dot(r, r)
        if abs(rho) < 1.0e-4:
            break
    return x, xi, k


def bicg_check(name, xf):
    x0, b = bicg_inputs()
    coeff = stencil7_coeff(5, 5)

    def matvec(v):
        y = np.zeros((5, 5, 5), dtype=np.float32)
        laplacian(coeff, 5, v.reshape(5, 5, 5), y)
        return y.ravel()

    tol = 1.0e-3 * np.linalg.norm(b.ravel(), 2)
    x_ref, _, _ = bicgstab_ref(matvec, x0.ravel(), b.ravel(), BICG_MAX_ITE, tol)
    np.testing.assert_allclose(x_ref.ravel(), xf.ravel(), 1.0e-5)


# ----------------------------------------------------------------------------------------
# cholesky: P = 10, Nt = 4 (N = 40); assert_almost_equal decimal=2
# ----------------------------------------------------------------------------------------

CHOL_P, CHOL_NT = 10, 4


def chol_inputs():
    n = CHOL_P * CHOL_NT
    counter = 1
    low = np.zeros((n, n), dtype=np.float32)
    for i in range(n):
        for j in range(i + 1):
            low[i, j] = counter
            counter += 1
    m = np.dot(low, low.T)
    for i in range(n):
        for j in range(i + 1, n):
            m[i, j] = 0
    return low, m


def chol_data(name):
    _, m = chol_inputs()
    p, nt = CHOL_P, CHOL_NT
    # tiles[py, px] = the tile A[py*nt .., px*nt ..] column-major; zero above the diagonal
    # (px > py: the vendor copies nothing there).
    tiles = np.zeros((p, p, nt * nt), dtype=np.float32)
    for py in range(p):
        for px in range(py + 1):
            tiles[py, px] = m[py * nt:(py + 1) * nt, px * nt:(px + 1) * nt].T.ravel()
    save(name, tiles=tiles, launch=np.zeros((1, p)))


def chol_check(name, l_tiles):
    low, _ = chol_inputs()
    p, nt = CHOL_P, CHOL_NT
    t = l_tiles.reshape(p, p, nt, nt)            # [py, px, column s, row r]
    result = t.transpose(0, 3, 1, 2).reshape(p * nt, p * nt)
    np.testing.assert_almost_equal(result, low, decimal=2)


# ----------------------------------------------------------------------------------------
# fft-1d-2d: 1D Nz = 4 in f32 on 1 PE, 2D 4 x 4 in f16 on 4 PEs, forward and inverse;
# the vendor's rtol 0.25, and 0.01 besides
# ----------------------------------------------------------------------------------------

FFT_NZ = 4


def fft_inputs(dim):
    nz = FFT_NZ
    precision = np.float32 if dim == 1 else np.float16
    nh = nz >> 1
    exponent = np.pi * np.arange(nh) / nh
    twiddle = np.zeros(nz, dtype=precision)
    twiddle[0::2] = np.cos(exponent).astype(precision)
    twiddle[1::2] = np.sin(exponent).astype(precision)
    np.random.seed(seed=7)
    nx = 1 if dim == 1 else nz
    random_array = np.random.random(nx * nz).astype(precision)
    return random_array.reshape((1, nx, nz)), twiddle


def fft_data(name):
    folder = "fft-1d-2d"
    x1, tw1 = fft_inputs(1)
    x2, tw2 = fft_inputs(2)
    xi1 = np.zeros(2 * FFT_NZ, dtype=np.float32)
    xi1[0::2] = x1[0, 0]
    xi2 = np.zeros((FFT_NZ, 2 * FFT_NZ), dtype=np.float32)
    xi2[:, 0::2] = x2[0]                      # PE x holds row x, interleaved with 0
    save(folder, x_1d=xi1, twiddle_1d=tw1.astype(np.float32), x_2d=xi2,
         twiddle_2d=np.tile(tw2.astype(np.float32), (FFT_NZ, 1)), launch=np.zeros((1, 1)))


def fft_check(name, y):
    inverse = "ifft" in name
    dim = 2 if name.endswith("_2d") else 1
    x, _ = fft_inputs(dim)
    y = y.reshape(-1)
    result = (y[0::2] + 1j * y[1::2]).reshape(x.shape)
    if dim == 2:
        result[0] = result[0].T
        reference = np.fft.ifft2(x) if inverse else np.fft.fft2(x)
    else:
        reference = np.fft.ifft(x) if inverse else np.fft.fft(x)
    np.testing.assert_allclose(result, reference, rtol=0.25, atol=0)
    np.testing.assert_allclose(result, reference, rtol=0.01, atol=0)


# ----------------------------------------------------------------------------------------
# 25-pt-stencil: 10 x 10 x 10, 10 iterations, dx = 20; the vendor's golden min and max
# ----------------------------------------------------------------------------------------

def gaussian_source(iterations):
    # The vendor's ic.computeGaussianSource (prints left out).
    tau = np.float32(1.0)
    scale = np.float32(8.0)
    mscale = np.float32(-8.0)
    _fmax = np.float32(25.0)
    dt = np.float32(0.001610153)
    sigma = np.float32(0.6) * _fmax
    t = np.arange(0, iterations, 1, dtype=np.float32) * np.float32(dt)
    power = np.power(sigma * t - tau, 2, dtype=np.float32)
    expf = np.exp(np.multiply(power, np.float32(mscale)))
    source = (np.float32(-2.0) * scale * sigma *
              np.multiply(sigma - np.float32(2.0) * sigma * scale * power, expf,
                          dtype=np.float32))
    first_zero_idx = np.nonzero(source)[-1][-1] + 1
    if first_zero_idx < source.shape[-1]:
        source = source[:first_zero_idx]
    return source, source.shape[-1]


def stencil25_data(name):
    width = height = zdim = 10
    iterations = 10
    source, source_length = gaussian_source(iterations)
    assert source_length == 10, source_length
    src_x, src_y = width // 2 - 5, height // 2 - 5
    vp = np.full((height, width, zdim), 10.3703699112, dtype=np.float32)
    source_all = np.zeros(width * height * zdim, dtype=np.float32)
    for tidx in range(source_length):
        source_all[src_y * width * zdim + src_x * zdim + tidx] = source[tidx]
    save(name, vp=vp, source=source_all.reshape(height, width, zdim),
         launch=np.zeros((1, height)))


def stencil25_check(name, maxmin):
    mm = maxmin.reshape(10, 10, 2)
    computed_max, computed_min = mm[:, :, 0].max(), mm[:, :, 1].min()
    print(f"{name}: min {computed_min}, max {computed_max}")
    np.testing.assert_allclose(computed_min, -1.3100899, atol=0.01, rtol=0)
    np.testing.assert_allclose(computed_max, 1200.9414062, atol=0.01, rtol=0)


# ----------------------------------------------------------------------------------------

DATA = {name: gemv_data for name in GEMV}
CHECK = {name: gemv_check for name in GEMV}
DATA["residual"] = residual_data
CHECK["residual"] = residual_check
DATA["mandelbrot"] = mandelbrot_data
CHECK["mandelbrot"] = mandelbrot_check
DATA["gemv-collectives_2d"] = c2d_data
CHECK["gemv-collectives_2d"] = c2d_check
DATA["bandwidth-test"] = bw_data
CHECK["bandwidth-test"] = bw_check
DATA["7pt-stencil-spmv"] = spmv_data
CHECK["7pt-stencil-spmv"] = spmv_check
DATA["power-method"] = power_data
CHECK["power-method"] = power_check
DATA["bicgstab"] = bicg_data
CHECK["bicgstab"] = bicg_check
DATA["cholesky"] = chol_data
CHECK["cholesky"] = chol_check
for fft_name in ("fft-1d-2d", "fft-1d-2d/ifft_1d", "fft-1d-2d/fft_2d", "fft-1d-2d/ifft_2d"):
    DATA[fft_name] = fft_data
    CHECK[fft_name] = fft_check
DATA["25-pt-stencil"] = stencil25_data
CHECK["25-pt-stencil"] = stencil25_check
DATA["single-tile-matvec"] = stm_data
CHECK["single-tile-matvec"] = stm_check


def main(argv):
    if len(argv) >= 2 and argv[0] == "data":
        for name in argv[1:] if argv[1] != "all" else sorted(DATA):
            DATA[name](name)
        return 0
    if len(argv) in (3, 4) and argv[0] == "check":
        name, path = argv[1], argv[2]
        if len(argv) == 4 and name == "bandwidth-test":
            import json
            with open(argv[3], encoding="utf-8") as report:
                CHECK[name](name, np.load(path), json.load(report))
        else:
            CHECK[name](name, np.load(path))
        print(f"{name}: matches the NumPy reference")
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
