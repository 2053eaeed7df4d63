"""NumPy reference for training through a fan-out: a tiny residual model, written
independently of wsel.

Usage: python3 tests/reference/residual.py DIR --steps N --batch B --lr LR --momentum M

Writes the model's data into DIR (x.npy, y.npy and the initial weights w1, b1, w2, b2, w3,
b3, drawn from a seeded generator), then trains

    h = relu(x W1 + b1);  s = h + (h W2 + b2);  z = s W3 + b3

against the targets y with the mean squared error mean((z - y)^2) over every element, with
SGD with momentum (v = m v + g; w -= lr v), in float64, on the batches in file order (no
shuffling: step k takes samples (k mod per_epoch) * B .. + B). `h` feeds both the second
dense layer and the sum, so its gradient is the sum of two:

    dz = 2 (z - y) / (B * 3);  ds = dz W3^T;  dh = ds + ds W2^T;  dh1 = dh * (h > 0).

The hand-written gradients are checked against central finite differences at the initial
weights before training. Writes DIR/reference/losses.npy (the loss before each step's
update), DIR/reference/<param>.npy (the trained weights) and
DIR/reference/losses_without_sum.npy: the losses when dh drops the skip path's ds, which a
comparison must be able to tell apart.
"""

import argparse
from pathlib import Path

import numpy as np

NAMES = ["w1", "b1", "w2", "b2", "w3", "b3"]
SAMPLES, FEATURES, CLASSES = 8, 4, 3


def make_data(rng):
    shapes = {
        "w1": (FEATURES, FEATURES),
        "b1": (FEATURES,),
        "w2": (FEATURES, FEATURES),
        "b2": (FEATURES,),
        "w3": (FEATURES, CLASSES),
        "b3": (CLASSES,),
    }
    params = {n: rng.uniform(-0.8, 0.8, shapes[n]).astype(np.float32) for n in NAMES}
    x = rng.uniform(-1.0, 1.0, (SAMPLES, FEATURES)).astype(np.float32)
    y = rng.uniform(-1.0, 1.0, (SAMPLES, CLASSES)).astype(np.float32)
    return params, x, y


def loss_and_grads(p, x, y, with_sum=True):
    h = np.maximum(x @ p["w1"] + p["b1"], 0.0)
    s = h + (h @ p["w2"] + p["b2"])
    z = s @ p["w3"] + p["b3"]
    loss = np.mean((z - y) ** 2)
    dz = 2.0 * (z - y) / z.size
    ds = dz @ p["w3"].T
    dh = ds @ p["w2"].T + (ds if with_sum else 0.0)
    dh1 = dh * (h > 0)
    grads = {
        "w3": s.T @ dz,
        "b3": dz.sum(axis=0),
        "w2": h.T @ ds,
        "b2": ds.sum(axis=0),
        "w1": x.T @ dh1,
        "b1": dh1.sum(axis=0),
    }
    return loss, grads


def check_gradients(p, x, y):
    """Central differences of the loss against the hand-written gradients."""
    _, grads = loss_and_grads(p, x, y)
    step = 1e-6
    for name in NAMES:
        for i in np.ndindex(p[name].shape):
            up = {n: v.copy() for n, v in p.items()}
            down = {n: v.copy() for n, v in p.items()}
            up[name][i] += step
            down[name][i] -= step
            numeric = (loss_and_grads(up, x, y)[0] - loss_and_grads(down, x, y)[0]) / (2 * step)
            assert abs(numeric - grads[name][i]) <= 1e-6 * max(1.0, abs(numeric)), (
                name, i, numeric, grads[name][i])


def train(p, x, y, args, with_sum=True):
    p = {n: v.copy() for n, v in p.items()}
    velocity = {n: np.zeros_like(v) for n, v in p.items()}
    per_epoch = SAMPLES // args.batch
    losses = []
    for step in range(args.steps):
        k = step % per_epoch
        rows = slice(k * args.batch, (k + 1) * args.batch)
        loss, grads = loss_and_grads(p, x[rows], y[rows], with_sum)
        losses.append(loss)
        for n in NAMES:
            velocity[n] = args.momentum * velocity[n] + grads[n]
            p[n] -= args.lr * velocity[n]
    return np.array(losses), p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", type=Path)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--lr", type=float, required=True)
    ap.add_argument("--momentum", type=float, required=True)
    args = ap.parse_args()

    params, x, y = make_data(np.random.default_rng(21))
    args.dir.mkdir(parents=True, exist_ok=True)
    for n in NAMES:
        np.save(args.dir / f"{n}.npy", params[n])
    np.save(args.dir / "x.npy", x)
    np.save(args.dir / "y.npy", y)

    p64 = {n: v.astype(np.float64) for n, v in params.items()}
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    check_gradients(p64, x64, y64)
    losses, trained = train(p64, x64, y64, args)
    without, _ = train(p64, x64, y64, args, with_sum=False)
    out = args.dir / "reference"
    out.mkdir(exist_ok=True)
    np.save(out / "losses.npy", losses)
    np.save(out / "losses_without_sum.npy", without)
    for n in NAMES:
        np.save(out / f"{n}.npy", trained[n])


if __name__ == "__main__":
    main()
