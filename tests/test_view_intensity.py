"""Tests for build_hooks.views.intensity: the arithmetic-intensity formulas and the ridge-point sentences."""

from build_hooks import page
from build_hooks.dataset import Dataset, Machine
from build_hooks.views import intensity
from conftest import complete_doc


def test_linear_intensity_tends_to_half_the_batch_in_fp32_and_the_width_for_large_batches():
    """A d×d Linear layer's FLOPs per byte is about B/2 in fp32 for B much smaller than d, and d/4 for very large B."""
    assert abs(intensity.linear_intensity(8, 65536, 4) - 4.0) < 0.01
    assert abs(intensity.linear_intensity(2**30, 512, 4) - 128) < 0.01  # 2·B·d² / (4·2·B·d) = d / 4
    assert intensity.linear_intensity(8, 4096, 2) > 2 * intensity.linear_intensity(8, 4096, 4) * 0.99


def test_unfused_attention_scores_stay_below_half_the_head_dimension_in_fp32():
    """Writing the L² scores out caps QKᵀ's intensity near d_head / 2 in fp32, whatever the sequence length."""
    assert intensity.attention_intensity(10**6, 64, 4) < 32
    assert intensity.attention_intensity(10**6, 64, 4) > 31.9


def test_crossing_batch_is_the_first_power_of_two_at_the_ridge_or_none():
    """The crossing batch reaches the ridge and half of it does not; a ridge above the limit gives None."""
    batch = intensity.crossing_batch(4096, 206, 2)
    assert intensity.linear_intensity(batch, 4096, 2) >= 206 > intensity.linear_intensity(batch // 2, 4096, 2)
    assert intensity.crossing_batch(64, 1000, 4) is None


def test_ridge_sentence_labels_the_measured_and_the_published_roofs():
    """The ridge sentence computes the build host's ridge from its measurements and labels the H200's as published."""
    text = page.render_fact("ridge_points", Dataset([Machine(complete_doc(), "fixture", "this build host")]))
    assert "(measured)" in text and "published: NVIDIA H200" in text
