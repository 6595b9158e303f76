"""Why GradScaler exists: small gradients vanish in float16 but survive in bfloat16.

float16 has 5 exponent bits: its smallest positive (subnormal) value is 2**-24, about
6e-8, and anything much smaller rounds to zero. bfloat16 keeps float32's 8 exponent
bits (range down to ~1e-38) and gives up mantissa bits instead. Scaling the loss by
2**16 before backward lifts small gradients into float16's range; the optimiser
divides by the same factor before using them.

Run it alone:  python snippets/fp16_underflow.py
"""

import numpy as np
import torch

GRADIENTS = [1e-3, 1e-5, 1e-7, 1e-8, 1e-9]
SCALE = 2.0**16


def table() -> str:
    rows = ["| true value | float16 | bfloat16 | float16 after ×2¹⁶ scaling, then unscaled |",
            "|---:|---:|---:|---:|"]
    for g in GRADIENTS:
        fp16 = float(np.float16(g))
        bf16 = float(torch.tensor(g, dtype=torch.bfloat16))
        scaled = float(np.float16(g * SCALE)) / SCALE
        rows.append(f"| {g:.0e} | {fp16:.3g} | {bf16:.3g} | {scaled:.3g} |")
    return "\n".join(rows)


def smallest_fp16() -> str:
    info = np.finfo(np.float16)
    return (f"float16: smallest normal {info.smallest_normal:.3g}, smallest subnormal "
            f"{info.smallest_subnormal:.3g}; bfloat16 smallest normal "
            f"{torch.finfo(torch.bfloat16).smallest_normal:.3g}")


if __name__ == "__main__":
    print(smallest_fp16())
    print(table())
