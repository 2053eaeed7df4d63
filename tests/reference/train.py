"""NumPy reference trainer for the digits MLP, written independently of wsel.

Usage: python3 tests/reference/train.py OUT_DIR --optimizer sgd|adam --lr LR --steps N
           --batch B --seed S [--momentum M] [--beta1 B1] [--beta2 B2] [--eps E]
           [--layers L --init DIR] [--data DIR]

With --layers L and --init DIR it trains a deeper MLP instead: L dense layers with a relu
after each but the last, then softmax, from DIR/w1.npy, DIR/b1.npy, ..., DIR/wL.npy,
DIR/bL.npy (compiler/driver/tests/training_recompute.rs, whose backward pass recomputes
activations); the gradients are the same rules applied layer by layer. With --data DIR the
samples and labels are DIR/x_train.npy and DIR/y_train.npy instead of digits'
(compiler/driver/tests/training_regions.rs trains a 512-wide model on data of its own).

Trains softmax(relu(relu(x W1 + b1) W2 + b2) W3 + b3) on examples/digits/data/x_train.npy
(labels y_train.npy) from the initial weights in examples/digits/data/init/, with the mean
cross-entropy loss, in float64 (so that the comparison measures wsel's float32 error, not
the reference's). The batch order is the one `wsel train` documents: every epoch a
Fisher-Yates shuffle of the sample indices driven by SplitMix64 from the seed (j = next() mod
(i + 1) for i from n - 1 down to 1), cut into consecutive batches, the last incomplete batch
dropped. Writes OUT_DIR/losses.npy (the loss before each step's update, float64) and
OUT_DIR/<param>.npy (the trained weights, float64).

The gradients are written out by hand (no autodiff library): with p the softmax output and
t the one-hot labels, d(mean CE)/d(logits) = (p - t) / B; a dense layer y = x W + b gives
dW = x^T dy, db = sum(dy), dx = dy W^T; relu passes dy where its output is positive.
SGD: v = momentum v + g, w -= lr v. Adam: m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2,
w -= lr m_hat / (sqrt(v_hat) + eps) with m_hat = m / (1 - b1^t), v_hat = v / (1 - b2^t).
"""

import argparse
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "examples" / "digits" / "data"
NAMES = ["w1", "b1", "w2", "b2", "w3", "b3"]
MASK = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)


def batches(n, batch, steps, seed):
    rng = SplitMix64(seed)
    per_epoch = n // batch
    perm = None
    for step in range(steps):
        k = step % per_epoch
        if k == 0:
            perm = list(range(n))
            for i in range(n - 1, 0, -1):
                j = rng.next() % (i + 1)
                perm[i], perm[j] = perm[j], perm[i]
        yield perm[k * batch:(k + 1) * batch]


def forward_backward(params, x, y):
    w1, b1, w2, b2, w3, b3 = (params[n] for n in NAMES)
    h1 = np.maximum(x @ w1 + b1, 0.0)
    h2 = np.maximum(h1 @ w2 + b2, 0.0)
    z = h2 @ w3 + b3
    e = np.exp(z - z.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    b = x.shape[0]
    t = np.zeros_like(p)
    t[np.arange(b), y] = 1.0
    loss = -np.log(p[np.arange(b), y]).mean()
    dz = (p - t) / b
    grads = {"w3": h2.T @ dz, "b3": dz.sum(axis=0)}
    dh2 = (dz @ w3.T) * (h2 > 0)
    grads["w2"], grads["b2"] = h1.T @ dh2, dh2.sum(axis=0)
    dh1 = (dh2 @ w2.T) * (h1 > 0)
    grads["w1"], grads["b1"] = x.T @ dh1, dh1.sum(axis=0)
    return loss, grads


def forward_backward_deep(params, x, y, layers):
    """forward_backward for `layers` dense layers (relu between them) and a softmax."""
    hs = [x]
    for k in range(1, layers + 1):
        z = hs[-1] @ params[f"w{k}"] + params[f"b{k}"]
        hs.append(np.maximum(z, 0.0) if k < layers else z)
    z = hs[-1]
    e = np.exp(z - z.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    b = x.shape[0]
    loss = -np.log(p[np.arange(b), y]).mean()
    dz = p.copy()
    dz[np.arange(b), y] -= 1.0
    dz /= b
    grads = {}
    for k in range(layers, 0, -1):
        grads[f"w{k}"], grads[f"b{k}"] = hs[k - 1].T @ dz, dz.sum(axis=0)
        if k > 1:
            dz = (dz @ params[f"w{k}"].T) * (hs[k - 1] > 0)
    return loss, grads


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--optimizer", choices=["sgd", "adam"], required=True)
    ap.add_argument("--lr", type=float, required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--beta1", type=float, default=0.9)
    ap.add_argument("--beta2", type=float, default=0.999)
    ap.add_argument("--eps", type=float, default=1e-8)
    ap.add_argument("--layers", type=int, default=0)
    ap.add_argument("--init", type=Path, default=DATA / "init")
    ap.add_argument("--data", type=Path, default=DATA)
    args = ap.parse_args()
    names = NAMES
    step = forward_backward
    if args.layers:
        names = [f"{p}{k}" for k in range(1, args.layers + 1) for p in "wb"]
        step = lambda params, x, y: forward_backward_deep(params, x, y, args.layers)  # noqa: E731

    x_all = np.load(args.data / "x_train.npy").astype(np.float64)
    y_all = np.load(args.data / "y_train.npy").astype(np.int64)
    params = {n: np.load(args.init / f"{n}.npy").astype(np.float64) for n in names}
    first = {n: np.zeros_like(v) for n, v in params.items()}
    second = {n: np.zeros_like(v) for n, v in params.items()}
    losses = []
    for t, rows in enumerate(batches(len(x_all), args.batch, args.steps, args.seed), start=1):
        loss, grads = step(params, x_all[rows], y_all[rows])
        losses.append(loss)
        for n in names:
            g = grads[n]
            if args.optimizer == "sgd":
                first[n] = args.momentum * first[n] + g
                params[n] = params[n] - args.lr * first[n]
            else:
                first[n] = args.beta1 * first[n] + (1 - args.beta1) * g
                second[n] = args.beta2 * second[n] + (1 - args.beta2) * g * g
                m_hat = first[n] / (1 - args.beta1 ** t)
                v_hat = second[n] / (1 - args.beta2 ** t)
                params[n] = params[n] - args.lr * m_hat / (np.sqrt(v_hat) + args.eps)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "losses.npy", np.array(losses))
    for n in names:
        np.save(out / f"{n}.npy", params[n])


if __name__ == "__main__":
    main()
