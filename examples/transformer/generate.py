"""Greedy generation on the simulated fabric: each new character is one `wsel run` of the
model (main.wse) on the current context, and the argmax of the last position's logits.

Usage (from the repository's root or anywhere):
    python3 examples/transformer/generate.py [--steps 50] [--prompt TEXT] [--mode MODE]
                                             [--wsel PATH] [--check]

The context is the last 64 characters (the model's context length) of prompt + generated
text. It runs as one sequence of 64 tokens, left-aligned and padded with id 0 after its
end: attention is causal, so the padding never reaches the positions before it, and the
logits of the last real position are those of the unpadded sequence. `--check` compares the
text with PyTorch's greedy generation (data/torch_generated.txt, written by train.py) and
exits with status 1 when they differ. Needs NumPy only.
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CONTEXT = 64


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--prompt", default=(HERE / "data/prompt.txt").read_text())
    ap.add_argument("--mode", default="streaming")
    ap.add_argument("--target", default=None)
    ap.add_argument("--wsel", default="wsel")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    vocab = (HERE / "data/vocab.txt").read_text()
    context = [vocab.index(c) for c in args.prompt]
    with tempfile.TemporaryDirectory() as tmp:
        ids_path, out_path = Path(tmp) / "ids.npy", Path(tmp) / "logits.npy"
        for step in range(args.steps):
            window = context[-CONTEXT:]
            ids = np.zeros((CONTEXT, 1), dtype=np.float32)
            ids[: len(window), 0] = window
            np.save(ids_path, ids)
            cmd = [args.wsel, "run", str(HERE / "main.wse"), "--input", f"ids={ids_path}",
                   "--output", str(out_path), "--batch", str(CONTEXT),
                   "--mode", args.mode, "--color", "never"]
            if args.target:
                cmd += ["--target", args.target]
            run = subprocess.run(cmd, capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit(f"step {step}: wsel run failed:\n{run.stdout}{run.stderr}")
            logits = np.load(out_path)
            context.append(int(logits[len(window) - 1].argmax()))
            print(vocab[context[-1]], end="", flush=True)
    print()
    generated = "".join(vocab[i] for i in context[len(args.prompt):])
    if args.check:
        expected = (HERE / "data/torch_generated.txt").read_text()[: args.steps]
        if generated != expected:
            sys.exit(f"differs from PyTorch's greedy generation:\n  wsel:    {generated!r}\n"
                     f"  PyTorch: {expected!r}")
        print(f"equal to PyTorch's greedy generation ({args.steps} characters)")


if __name__ == "__main__":
    main()
