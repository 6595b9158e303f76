"""Published peak figures of the GPUs readers have: never measured here, always with their source.

Dense figures: where a vendor lists tensor-core rates "with sparsity" (2:4 structured
sparsity doubles them), the dense rate, half of it, is what a training step can reach,
and that is what is stored. FP32 is the plain (non-tensor-core) rate, which PyTorch's
default float32 matmul precision ("highest") uses; TF32 is the tensor-core rate a
`torch.backends.cuda.matmul.fp32_precision = "tf32"` (formerly `allow_tf32`) run uses.
A figure a vendor does not publish is None, shown as "not published".
"""

from __future__ import annotations

from dataclasses import dataclass

T = 1e12


@dataclass(frozen=True)
class Datasheet:
    name: str
    fp32_flops: float | None       # FLOP/s, plain FP32
    tf32_flops: float | None       # FLOP/s, dense, tensor cores
    bf16_flops: float | None       # FLOP/s, dense, tensor cores
    memory_bytes_s: float | None   # device memory bandwidth, bytes/s
    host_link_bytes_s: float | None  # one direction of the host link, bytes/s
    source: str
    names: tuple[str, ...]         # the device names torch reports for this GPU (compared ignoring case)

    def peak(self, precision: str) -> float | None:
        return {"fp32": self.fp32_flops, "tf32": self.tf32_flops, "bf16": self.bf16_flops,
                "fp16": self.bf16_flops}.get(precision)


PCIE5_X16 = 64e9  # PCI Express 5.0 x16: 32 GT/s x 16 lanes, one direction (PCI-SIG base specification 5.0)
PCIE4_X16 = 32e9  # PCI Express 4.0 x16, one direction (PCI-SIG base specification 4.0)
HOPPER = ("NVIDIA H100 Tensor Core GPU datasheet (2023), specifications table (its tensor-core rates are listed with "
          "sparsity; this site halves them for dense)")

NVLINK_C2C = 450e9  # NVLink-C2C between Grace and Hopper: 900 GB/s both directions together (GH200 datasheet)
H200_SHEET = ("NVIDIA H200 Tensor Core GPU datasheet (2024), specifications table, {} column "
              "(its tensor-core rates are listed with sparsity; this site halves them for dense)")

SHEETS = [
    Datasheet("NVIDIA H200 SXM", 67 * T, 494.5 * T, 989.5 * T, 4.8e12, PCIE5_X16,
              H200_SHEET.format("H200 SXM"), ("nvidia h200",)),
    Datasheet("NVIDIA H200 NVL", 60 * T, 417.5 * T, 835.5 * T, 4.8e12, PCIE5_X16,
              H200_SHEET.format("H200 NVL"), ("nvidia h200 nvl",)),
    Datasheet("NVIDIA GH200", 67 * T, 494.5 * T, 989.5 * T, 4.9e12, NVLINK_C2C,
              "NVIDIA GH200 Grace Hopper Superchip datasheet (2024), specifications table (tensor-core rates "
              "listed with sparsity, halved here; memory: the 144 GB HBM3e version's 4.9 TB/s, the higher of "
              "its two; host link: NVLink-C2C's 900 GB/s, half of it per direction)",
              ("nvidia gh200 480gb", "nvidia gh200 144g hbm3e", "nvidia gh200 120gb")),
    Datasheet("NVIDIA H100 SXM", 67 * T, 494.5 * T, 989.5 * T, 3.35e12, PCIE5_X16,
              HOPPER + " (H100 SXM column)", ("nvidia h100 80gb hbm3", "nvidia h100 sxm5 80gb")),
    Datasheet("NVIDIA H100 PCIe", 51 * T, 378 * T, 756.5 * T, 2.0e12, PCIE5_X16,
              HOPPER + " (H100 PCIe column)", ("nvidia h100 pcie",)),
    Datasheet("NVIDIA A100 80GB SXM", 19.5 * T, 156 * T, 312 * T, 2.039e12, PCIE4_X16,
              "NVIDIA A100 Tensor Core GPU datasheet (2021), specifications table, A100 80GB SXM column "
              "(dense rates; sparse in brackets there)", ("nvidia a100-sxm4-80gb",)),
    Datasheet("NVIDIA L4", 30.3 * T, 60 * T, 121 * T, 300e9, PCIE4_X16,
              "NVIDIA L4 Tensor Core GPU datasheet (2023), specifications table; tensor rates listed with "
              "sparsity, halved", ("nvidia l4",)),
    Datasheet("NVIDIA GeForce RTX 4090", 82.6 * T, 82.6 * T, 165.2 * T, 1.008e12, PCIE4_X16,
              "NVIDIA Ada GPU Architecture whitepaper (2023), Appendix A, GeForce RTX 4090 column "
              "(dense; BF16 with FP32 accumulate)", ("nvidia geforce rtx 4090",)),
    Datasheet("Apple M1 Max (32-core GPU)", 10.4 * T, None, None, 400e9, None,
              "Apple newsroom, 'Introducing M1 Pro and M1 Max' (18 October 2021): 10.4 teraflops, "
              "400 GB/s; Apple publishes no tensor or BF16 rate", ("apple m1 max gpu (mps)",)),
    Datasheet("Apple M1 Ultra (64-core GPU)", 21 * T, None, None, 800e9, None,
              "Apple newsroom, 'Apple unveils M1 Ultra' (8 March 2022): 21 teraflops, 800 GB/s; "
              "Apple publishes no tensor or BF16 rate", ("apple m1 ultra gpu (mps)",)),
]


def for_gpu(name: str | None) -> Datasheet | None:
    """The datasheet of the GPU torch names exactly so (case and spacing aside), if we have it.

    Whole names, not substrings: "NVIDIA GH200 480GB" contains "h200" but is another part, with
    another host link, and "H200 NVL" has lower peaks than the H200 SXM.
    """
    if not name:
        return None
    wanted = " ".join(name.lower().split())
    return next((sheet for sheet in SHEETS if wanted in sheet.names), None)


def by_name(name: str) -> Datasheet:
    return next(sheet for sheet in SHEETS if sheet.name == name)
