"""Why GradScaler exists: small gradients vanish in float16 but survive in bfloat16.

float16 has 5 exponent bits: its smallest positive (subnormal) value is 2**-24, about
6e-8, and anything below half of that rounds to zero. bfloat16 keeps float32's 8 exponent
bits (range down to ~1e-38) and gives up mantissa bits instead: it has the layout of a
float32's top 16 bits, and converting rounds the 16 bits dropped to nearest (ties to
even), as PyTorch and the hardware do and as to_bfloat16 does here. Scaling the loss by 2**16
before backward lifts small gradients into float16's range; the optimiser divides by
the same factor before using them.

Run it alone:  python snippets/fp16_underflow.py
"""

import numpy as np

GRADIENTS = [1e-3, 1e-5, 1e-7, 1e-8, 1e-9]
SCALE = 2.0**16


def to_bfloat16(value: float) -> float:
    """Round a float32 to bfloat16 (nearest, ties to even) by keeping its top 16 bits."""
    bits = int(np.array(value, dtype=np.float32).view(np.uint32))
    bits += 0x7FFF + ((bits >> 16) & 1)  # round half to even on the 16 bits dropped
    return float(np.array((bits >> 16) << 16, dtype=np.uint32).view(np.float32))


def table() -> str:
    rows = ["| true value | float16 | bfloat16 | float16 after ×2¹⁶ scaling, then unscaled |",
            "|---:|---:|---:|---:|"]
    for g in GRADIENTS:
        fp16 = float(np.float16(g))
        scaled = float(np.float16(g * SCALE)) / SCALE
        rows.append(f"| {g:.0e} | {fp16:.3g} | {to_bfloat16(g):.3g} | {scaled:.3g} |")
    return "\n".join(rows)


def smallest_fp16() -> str:
    fp16, fp32 = np.finfo(np.float16), np.finfo(np.float32)
    return (f"float16: smallest normal {fp16.smallest_normal:.3g}, smallest subnormal "
            f"{fp16.smallest_subnormal:.3g}; bfloat16 (float32's exponent) smallest normal "
            f"{fp32.smallest_normal:.3g}")


def reading() -> str:
    """One row of the table in words: the first gradient float16 loses and scaling saves."""
    for g in GRADIENTS:
        if float(np.float16(g)) == 0 and float(np.float16(g * SCALE)) / SCALE != 0:
            return (f"Reading the table: a gradient of {g:.0e} becomes 0 in float16, survives in "
                    f"bfloat16 as {to_bfloat16(g):.3g}, and survives float16 too once scaled, as "
                    f"{float(np.float16(g * SCALE)) / SCALE:.3g}.")
    return "Reading the table: every gradient listed survives float16 here."


def report() -> str:
    """The ranges, the table and its reading, as Markdown."""
    return smallest_fp16() + "\n\n" + table() + "\n\n" + reading()


if __name__ == "__main__":
    print(report())
