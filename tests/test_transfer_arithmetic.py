"""The worked transfer arithmetic: published rates, divided honestly."""

from snippets import transfer_arithmetic


def test_the_cheat_sheets_line_sizes_the_copy_in_mib_as_the_measured_copies_are():
    """256 MiB is 268 MB, and 268 MB over PCIe 5.0's published 64 GB/s takes 4.2 ms."""
    assert transfer_arithmetic.one_line(256) == ("256 MiB = 268 MB; 268 MB / 64 GB/s (PCIe 5.0 x16, published: PCI-SIG) "
                                                  "= 4.2 ms")
