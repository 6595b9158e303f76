"""Worked example 1: count the arithmetic of one dense layer before timing anything.

A layer with batch B, D inputs and H outputs computes Y = X @ W: B*H dot products of
length D, each D multiplies and D adds, so 2*B*D*H FLOPs forward. Backward computes
two products of the same size (the gradient for W and the gradient for X): about
twice the forward. Dividing by a rate gives the time the arithmetic alone would take at
that rate; the page puts a published GPU figure next to this build's measured CPU.

Run it alone:  python snippets/flop_count.py
"""

SHAPES = [(1, 512, 512), (32, 512, 512), (512, 512, 512), (512, 4096, 4096)]
# Published: an NVIDIA H200 SXM's plain FP32 rate (H200 datasheet, 2024, specifications table);
# its dense 16-bit tensor-core rate is about fifteen times higher. The site's build takes the
# same figure from build_hooks/datasheets.py.
GPU_RATE = 67e12
GPU_LABEL = "at 67 TFLOP/s (NVIDIA H200 SXM, FP32, published)"


def layer_flops(batch: int, inputs: int, outputs: int) -> tuple[int, int]:
    """(forward, backward) FLOPs of one dense layer."""
    forward = 2 * batch * inputs * outputs
    return forward, 2 * forward


def seconds_text(seconds: float) -> str:
    for scale, unit in ((1, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e12:.3g} ps"


def counts(rates: list[float]) -> list[tuple[tuple[int, int, int], int, int, list[float]]]:
    """For every shape: ((B, D, H), forward FLOPs, backward FLOPs, seconds at each rate)."""
    rows = []
    for shape in SHAPES:
        forward, backward = layer_flops(*shape)
        rows.append((shape, forward, backward, [(forward + backward) / rate for rate in rates]))
    return rows


def table(rates: dict[str, float] | None = None) -> str:
    """Markdown: FLOPs per shape and the time they take at each named rate (FLOP/s)."""
    rates = rates or {GPU_LABEL: GPU_RATE}
    lines = ["| B, D, H | forward FLOPs | backward FLOPs | total | " + " | ".join(rates) + " |",
             "|---|---:|---:|---:|" + "---:|" * len(rates)]
    for (b, d, h), forward, backward, seconds in counts(list(rates.values())):
        lines.append(f"| {b}, {d}, {h} | {forward:.3g} | {backward:.3g} | {forward + backward:.3g} | "
                     + " | ".join(seconds_text(s) for s in seconds) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
