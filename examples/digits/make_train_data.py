"""Write the training split and the initial weights that `train.wse` starts from.

    data/x_train.npy  f32[1437, 64]   the digits not in the test split (same split as train.py)
    data/y_train.npy  i32[1437]       their labels
    data/init/w1.npy ... b3.npy       initial weights: He-uniform for the weights, zero biases,
                                      from NumPy's PCG64 with seed 21

Usage: python3 examples/digits/make_train_data.py  (numpy and scikit-learn: requirements.txt)
"""

from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

DATA = Path(__file__).resolve().parent / "data"
SEED = 7  # the split of train.py
SIZES = [64, 32, 16, 10]


def main():
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=360, random_state=SEED, stratify=y
    )
    assert np.array_equal(x_test, np.load(DATA / "x_test.npy")), "not train.py's split"
    np.save(DATA / "x_train.npy", x_train)
    np.save(DATA / "y_train.npy", y_train)
    rng = np.random.default_rng(21)
    (DATA / "init").mkdir(exist_ok=True)
    for i, (n, m) in enumerate(zip(SIZES, SIZES[1:]), start=1):
        bound = np.sqrt(6.0 / n)
        np.save(DATA / "init" / f"w{i}.npy", rng.uniform(-bound, bound, (n, m)).astype(np.float32))
        np.save(DATA / "init" / f"b{i}.npy", np.zeros(m, dtype=np.float32))


if __name__ == "__main__":
    main()
