"""Worked example: how long does moving a batch take, before any arithmetic happens?

time = bytes / bandwidth. The published rates are the theoretical peaks of the
link generations (per direction, x16 lanes, before the 128b/130b encoding takes about
1.5% of them); real copies reach less (protocol overhead, and pageable memory is staged
through a pinned buffer first), and small ones much less, because every copy also has a
fixed cost: the transfer page measures what a GPU machine reaches, where a build has one.
A copy within GPU memory reads and writes every byte, twice the HBM column's time.

Run it alone:  python snippets/transfer_arithmetic.py
"""

SIZES_MB = [1, 16, 256]
EXAMPLE_MB = 256  # the worked example's copy
PUBLISHED = {  # name: bytes/s, theoretical per direction (published specifications)
    "PCIe 4.0 x16": 32e9,
    "PCIe 5.0 x16": 64e9,
    "HBM3e on an H200 (reading the bytes once)": 4.8e12,
}
SOURCES = {  # where each rate is published
    "PCIe 4.0 x16": "PCI-SIG, PCI Express Base Specification Revision 4.0 (16 GT/s per lane)",
    "PCIe 5.0 x16": "PCI-SIG, PCI Express Base Specification Revision 5.0 (32 GT/s per lane)",
    "HBM3e on an H200 (reading the bytes once)": "NVIDIA H200 Tensor Core GPU datasheet",
}


def transfer_ms(megabytes: float, bytes_per_s: float) -> float:
    return megabytes * 1e6 / bytes_per_s * 1e3


def times_ms(rates: list[float]) -> list[tuple[int, list[float]]]:
    """(size in MB, milliseconds at each rate) for every size in SIZES_MB."""
    return [(mb, [transfer_ms(mb, rate) for rate in rates]) for mb in SIZES_MB]


def example(megabytes: int = EXAMPLE_MB, link: str = "PCIe 5.0 x16") -> str:
    """One sentence of the arithmetic, for the transfer page (over the H200 SXM's host link by default)."""
    rate = PUBLISHED[link]
    return (f"{megabytes} MB over {link}, at its published {rate / 1e9:.0f} GB/s per direction, takes "
            f"{transfer_ms(megabytes, rate):.0f} ms (source: {SOURCES[link].split(',')[0]}).")


def one_line(mebibytes: int = EXAMPLE_MB, link: str = "PCIe 5.0 x16") -> str:
    """The same arithmetic as a formula, for the cheat sheet. Sized in MiB, as the measured copies beside it are
    (a power of two), with the decimal megabytes the rate divides."""
    rate, megabytes = PUBLISHED[link], mebibytes * 2**20 / 1e6
    return (f"{mebibytes} MiB = {megabytes:.0f} MB; {megabytes:.0f} MB / {rate / 1e9:.0f} GB/s ({link}, published: "
            f"{SOURCES[link].split(',')[0]}) = {transfer_ms(megabytes, rate):.1f} ms")


if __name__ == "__main__":
    for mb, times in times_ms(list(PUBLISHED.values())):
        print(f"{mb} MB: " + "; ".join(f"{name} {ms:.3g} ms" for name, ms in zip(PUBLISHED, times)))
