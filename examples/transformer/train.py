"""Trains the example's GPT-style decoder with PyTorch, once, and exports what the example
and its tests use. Run from this folder: `python3 train.py > train.log` (PyTorch on the CPU;
nothing else in the repository needs PyTorch).

The model (as std.nn computes it, tokens as samples — stdlib/nn.wse, "Transformer layers"):
    h = wte[ids] + wpe[position]
    2 × { a = LN1(h); h = h + Wo·attention(Wq·a, Wk·a, Wv·a) (4 heads, causal)
          m = LN2(h); h = h + W2·gelu_tanh(W1·m) }
    logits = Whead·LNf(h)
d_model 128, 4 heads, context 64, MLP 512, a character vocabulary of the text's 60
characters; trained on the first 90% of data/declaration.txt (the Declaration of
Independence, public domain), the held-out batch is taken from the last 10%.

Writes into data/:
    vocab.txt            the characters, in id order (no trailing newline)
    *.npy                the weights, float32, dense weights as [inputs, outputs]
    ids.npy              f32[256, 1]: the held-out batch, 4 sequences of 64 token ids
    torch_logits.npy     f32[256, 60]: PyTorch's logits for it
    torch_pred.npy       i32[256]: their argmax
    prompt.txt           the prompt of the greedy generation
    torch_generated.txt  PyTorch's greedy continuation of it (50 characters)
"""

import math
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SEED = 20
D, HEADS, T, MLP, BLOCKS = 128, 4, 64, 512, 2
STEPS, BATCH, LR = 2000, 32, 3e-3
HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
PROMPT = "We hold these truths to be self"
GENERATE = 50


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D, eps=1e-5)
        self.q, self.k, self.v, self.o = (nn.Linear(D, D) for _ in range(4))
        self.ln2 = nn.LayerNorm(D, eps=1e-5)
        self.fc1, self.fc2 = nn.Linear(D, MLP), nn.Linear(MLP, D)

    def forward(self, h):
        b, t, _ = h.shape
        a = self.ln1(h)
        split = lambda x: x.view(b, t, HEADS, D // HEADS).transpose(1, 2)
        q, k, v = split(self.q(a)), split(self.k(a)), split(self.v(a))
        s = (q @ k.transpose(-1, -2)) / math.sqrt(D // HEADS)
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), 1)
        s = s.masked_fill(mask, float("-inf"))
        y = (F.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(b, t, D)
        h = h + self.o(y)
        return h + self.fc2(F.gelu(self.fc1(self.ln2(h)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, D), nn.Embedding(T, D)
        self.blocks = nn.ModuleList(Block() for _ in range(BLOCKS))
        self.lnf, self.head = nn.LayerNorm(D, eps=1e-5), nn.Linear(D, vocab)

    def forward(self, ids):
        h = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
        for block in self.blocks:
            h = block(h)
        return self.head(self.lnf(h))


def export(model, vocab):
    def save(name, t):
        np.save(DATA / f"{name}.npy", np.ascontiguousarray(t.detach().numpy(), dtype=np.float32))

    save("wte", model.wte.weight)
    save("wpe", model.wpe.weight)
    for i, b in enumerate(model.blocks, 1):
        save(f"ln1_g{i}", b.ln1.weight)
        save(f"ln1_b{i}", b.ln1.bias)
        for name, lin in (("q", b.q), ("k", b.k), ("v", b.v), ("o", b.o), ("fc1", b.fc1), ("fc2", b.fc2)):
            save(f"w{name}{i}", lin.weight.T)
            save(f"b{name}{i}", lin.bias)
        save(f"ln2_g{i}", b.ln2.weight)
        save(f"ln2_b{i}", b.ln2.bias)
    save("lnf_g", model.lnf.weight)
    save("lnf_b", model.lnf.bias)
    save("whead", model.head.weight.T)
    save("bhead", model.head.bias)
    (DATA / "vocab.txt").write_text("".join(vocab))


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    text = (DATA / "declaration.txt").read_text()
    vocab = sorted(set(text))
    ids = torch.tensor([vocab.index(c) for c in text])
    cut = int(len(ids) * 0.9)
    train, held = ids[:cut], ids[cut:]
    model = Gpt(len(vocab))
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)
    print(f"seed {SEED}; {sum(p.numel() for p in model.parameters())} parameters; "
          f"{len(train)} training characters, {len(held)} held out; vocabulary {len(vocab)}")
    for step in range(1, STEPS + 1):
        starts = torch.randint(0, len(train) - T - 1, (BATCH,))
        x = torch.stack([train[s:s + T] for s in starts])
        y = torch.stack([train[s + 1:s + T + 1] for s in starts])
        loss = F.cross_entropy(model(x).reshape(-1, len(vocab)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0 or step == 1:
            print(f"step {step:5d}  train loss {loss.item():.4f}")
    model.eval()
    export(model, vocab)
    with torch.no_grad():
        batch = torch.stack([held[i * T:(i + 1) * T] for i in range(4)])
        logits = model(batch).reshape(-1, len(vocab))
        target = torch.stack([held[i * T + 1:(i + 1) * T + 1] for i in range(4)]).reshape(-1)
        print(f"held-out batch: loss {F.cross_entropy(logits, target).item():.4f}, "
              f"next-character accuracy {(logits.argmax(1) == target).float().mean().item():.3f}")
        np.save(DATA / "ids.npy", batch.reshape(-1, 1).numpy().astype(np.float32))
        np.save(DATA / "torch_logits.npy", logits.numpy().astype(np.float32))
        np.save(DATA / "torch_pred.npy", logits.argmax(1).numpy().astype(np.int32))
        # Greedy generation: the last T characters (at most) as the context, each step.
        context = [vocab.index(c) for c in PROMPT]
        for _ in range(GENERATE):
            window = torch.tensor([context[-T:]])
            context.append(int(model(window)[0, -1].argmax()))
        generated = "".join(vocab[i] for i in context[len(PROMPT):])
        (DATA / "prompt.txt").write_text(PROMPT)
        (DATA / "torch_generated.txt").write_text(generated)
        print(f"greedy generation from {PROMPT!r}: {generated!r}")


if __name__ == "__main__":
    main()
