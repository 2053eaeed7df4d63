"""Train the `digits` example's classifier and write its weights and test split as .npy.

The model is the one in main.wse: 64 -> 32 (relu) -> 16 (relu) -> 10 (softmax), trained with
scikit-learn's MLPClassifier on its bundled 8x8 handwritten-digits data set (no download).
Pixel values are scaled from 0..16 to 0..1. Everything written is float32 (or int32 labels):

    data/w1.npy  f32[64, 32]    data/b1.npy  f32[32]
    data/w2.npy  f32[32, 16]    data/b2.npy  f32[16]
    data/w3.npy  f32[16, 10]    data/b3.npy  f32[10]
    data/x_test.npy  f32[360, 64]   the held-out test split
    data/y_test.npy  i32[360]       its true labels
    data/sklearn_pred.npy i32[360]  scikit-learn's predicted classes on the test split

The test suite compares wsel's predictions with sklearn_pred.npy. Because the fabric computes
in float32 and scikit-learn in float64, the script checks that a float32 forward pass in NumPy
predicts exactly the same classes, so the comparison is exact, not lucky.

Usage: python3 examples/digits/train.py   (numpy and scikit-learn: examples/digits/requirements.txt)
"""

from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

DATA = Path(__file__).resolve().parent / "data"
SEED = 7


def forward_f32(weights, biases, x):
    """The model's forward pass in float32, layer by layer as the fabric computes it."""
    h = x.astype(np.float32)
    for i, (w, b) in enumerate(zip(weights, biases)):
        h = h @ w + b
        if i < len(weights) - 1:
            h = np.maximum(h, np.float32(0))
    e = np.exp(h - h.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main():
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=360, random_state=SEED, stratify=y
    )
    clf = MLPClassifier(
        hidden_layer_sizes=(32, 16), activation="relu", max_iter=2000, random_state=SEED
    )
    clf.fit(x_train, y_train)
    weights = [w.astype(np.float32) for w in clf.coefs_]
    biases = [b.astype(np.float32) for b in clf.intercepts_]
    sklearn_pred = clf.predict(x_test).astype(np.int32)
    f32_pred = forward_f32(weights, biases, x_test).argmax(axis=1).astype(np.int32)
    mismatches = int((f32_pred != sklearn_pred).sum())
    if mismatches:
        raise SystemExit(f"float32 forward pass disagrees with scikit-learn on {mismatches} samples")

    DATA.mkdir(exist_ok=True)
    for i, (w, b) in enumerate(zip(weights, biases), start=1):
        np.save(DATA / f"w{i}.npy", w)
        np.save(DATA / f"b{i}.npy", b)
    np.save(DATA / "x_test.npy", x_test)
    np.save(DATA / "y_test.npy", y_test)
    np.save(DATA / "sklearn_pred.npy", sklearn_pred)
    accuracy = float((sklearn_pred == y_test).mean())
    print(f"trained: test accuracy {accuracy:.4f} on {len(y_test)} samples; wrote {DATA}")


if __name__ == "__main__":
    main()
