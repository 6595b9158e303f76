"""How long does one training step of a small decoder-only transformer take, as the batch grows?

The model, in plain torch: token embedding plus learned positions, LAYERS pre-norm
blocks (LayerNorm -> causal multi-head self-attention -> residual add, LayerNorm ->
4x MLP with GELU -> residual add), a final LayerNorm and an untied LM head over a
small vocabulary. The loss is cross-entropy on the next token; AdamW updates every
weight. One step is what a training loop does per batch: zero the gradients,
forward, loss, backward, optimiser step, with the batch already on the device.

The arithmetic, counted analytically (Kaplan et al. 2020, "Scaling Laws for Neural
Language Models", section 2.1, with d_attn = d_model and d_ff = 4 d_model):

    matmul weights  N = LAYERS x 12 d^2  (QKV 3d^2, projection d^2, MLP 8d^2)  +  d x VOCAB (head)
    forward         2 N FLOPs per token  +  4 B L^2 d per layer (Q K^T and attention x V, 2 B L^2 d each)
    step            3 x forward  (the backward pass costs about twice the forward)

so a step costs about 6 N FLOPs per token plus the attention's term, which grows with
the square of the sequence L. Embedding look-ups, biases, LayerNorm, softmax and the
optimiser are left out: they move bytes, not FLOPs. The attention term counts the full
L x L square; a causal kernel may skip the masked half. PyTorch's own FlopCounterMode
counts the matrix products exactly (recorded as `counted_flops`), but not the fused
attention kernel on a CPU, which is why the analytic count is the one used.

Run it alone:  python snippets/transformer_block.py
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

try:  # imported as part of the project
    from snippets.benchmarking import all_threads, budget, devices, time_it
    from snippets.training_step import count_work, cuda_work
except ImportError:  # run as a script: python snippets/transformer_block.py
    from benchmarking import all_threads, budget, devices, time_it
    from training_step import count_work, cuda_work

NAME = "transformer_block"
# In a GPU machine's slot, after the headline experiments (measure.FIRST): the H200's run took
# 337 s of its 450 s limit without it, and the limit stops what does not fit, so the headlines are
# never put at risk. Until a GPU has run it, the transformer page shows the labelled H200 estimate.
DEVICES = ["cpu", "cuda", "mps"]  # like the race's step: every device torch offers
BENCH_VERSION = 2  # 2: what a CUDA step issues (foreach AdamW) counted too
PARAMS = {"batch": "positive", "d_model": "positive", "seq": "positive"}
DEPENDS = ["training_step"]
EXTRA_INFO = {"flops": "FLOP", "params": "count", "tokens": "count", "counted_flops": "FLOP",
              "ops": "count", "bytes": "B", "footprint": "B"}  # ops/bytes/footprint: for the cost models
EXTRA_INFO_OPTIONAL = {"cuda_ops": "count", "kernels": "count"}  # as training_step's: for the GPU estimate
LAYERS, HEADS, VOCAB, MLP_RATIO = 2, 4, 512, 4
QUICK = {"batches": [1, 8], "d_models": [128], "seq": 64}
FULL = {"batches": [1, 4, 16, 64], "d_models": [128, 256], "seq": 64}


class Block(nn.Module):
    """One pre-norm decoder block: x + attention(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, d_model: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.up = nn.Linear(d_model, MLP_RATIO * d_model)
        self.down = nn.Linear(MLP_RATIO * d_model, d_model)

    def forward(self, x):
        batch, length, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(batch, length, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # each token sees only its past
        x = x + self.proj(attended.transpose(1, 2).reshape(batch, length, d))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class TinyGPT(nn.Module):
    """Embeddings, LAYERS blocks, a final LayerNorm and an LM head: logits for every position."""

    def __init__(self, d_model: int, seq: int):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d_model)
        self.position = nn.Embedding(seq, d_model)
        self.blocks = nn.Sequential(*[Block(d_model, HEADS) for _ in range(LAYERS)])
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, VOCAB, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens) + self.position.weight[: tokens.shape[1]]
        return self.head(self.norm(self.blocks(x)))


def make_model(d_model: int, seq: int, device: str, foreach: bool | None = None):
    """The transformer and its AdamW optimiser, on `device` (foreach: as training_step.make_model)."""
    torch.manual_seed(0)
    model = TinyGPT(d_model, seq).to(device)
    return model, torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=foreach)


def make_batch(batch: int, seq: int, device: str):
    """Random token sequences and their next-token targets (the input shifted by one)."""
    tokens = torch.randint(0, VOCAB, (batch, seq + 1), device=device)
    return tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()


def train_step(model, optimiser, tokens, targets):
    """One complete training step: zero the gradients, forward, next-token loss, backward, update."""
    optimiser.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(tokens).reshape(-1, VOCAB), targets.reshape(-1))
    loss.backward()
    optimiser.step()
    return loss


def make_step(batch: int, d_model: int, seq: int, device: str, foreach: bool | None = None):
    """A no-argument training step with its batch already on `device`."""
    model, optimiser = make_model(d_model, seq, device, foreach)
    tokens, targets = make_batch(batch, seq, device)
    return lambda: train_step(model, optimiser, tokens, targets)


def matmul_params(d_model: int) -> int:
    """N: the weights that take part in matrix products (blocks and LM head; not embeddings, biases, norms)."""
    return LAYERS * (3 + 1 + 2 * MLP_RATIO) * d_model**2 + d_model * VOCAB


def attention_flops(batch: int, d_model: int, seq: int) -> int:
    """Forward FLOPs of the attention products of every layer: Q K^T and weights x V, 2 B L^2 d each."""
    return LAYERS * 4 * batch * seq**2 * d_model


def step_flops(batch: int, d_model: int, seq: int) -> int:
    """FLOPs of one training step: 3 x (2 N per token + the attention term), the module docstring's formula."""
    return 3 * (2 * matmul_params(d_model) * batch * seq + attention_flops(batch, d_model, seq))


_counted: dict[tuple, dict] = {}  # (batch, d_model, seq, device) -> count_work's counts of one step


def plan(device_list: list[str], quick: bool) -> list[dict]:
    """Every point: each device, d_model and batch at one sequence length."""
    sizes = QUICK if quick else FULL
    return [{"device": d, "batch": b, "d_model": m, "seq": sizes["seq"]}
            for d in device_list for m in sizes["d_models"] for b in sizes["batches"]]


def measure(point: dict, threads: int, quick: bool) -> dict:
    """Seconds per training step, with the step's FLOPs (analytic and counted), parameters and tokens."""
    batch, d_model, seq, device = point["batch"], point["d_model"], point["seq"], point["device"]
    model, optimiser = make_model(d_model, seq, device)
    tokens, targets = make_batch(batch, seq, device)

    def step():
        return train_step(model, optimiser, tokens, targets)

    step()  # AdamW creates its state on the first step: count and time steady steps, not that one
    key = (batch, d_model, seq, device)
    if key not in _counted:  # the counts are exact and the same every round: counted once per process
        _counted[key] = {**count_work(step),
                         **cuda_work(lambda: make_step(batch, d_model, seq, "cpu", foreach=True))}
    counts = _counted[key]
    samples = time_it(step, threads=threads, min_run_time=budget(quick), device=device, warmup=2)
    extra = {"flops": step_flops(batch, d_model, seq), "counted_flops": counts["flops"],
             "params": sum(p.numel() for p in model.parameters()), "tokens": batch * seq,
             "ops": counts["ops"], "bytes": counts["bytes"], "footprint": counts["footprint"],
             "cuda_ops": counts["cuda_ops"], "kernels": counts["kernels"]}
    return {"unit": "s", "samples": samples, "extra": extra}


if __name__ == "__main__":
    threads = all_threads()
    print(f"{'device':>6} {'d_model':>7} {'batch':>6} {'step (ms)':>10} {'tokens/s':>10} {'GFLOP/s':>8}")
    for point in plan(devices(), quick=False):
        result = measure(point, threads, quick=False)
        median = sorted(result["samples"])[len(result["samples"]) // 2]
        print(f"{point['device']:>6} {point['d_model']:>7} {point['batch']:>6} {median * 1e3:>10.2f} "
              f"{result['extra']['tokens'] / median:>10.0f} {result['extra']['flops'] / median / 1e9:>8.1f}")
