"""The race page: measured epoch times baked in as inert JSON, and the same numbers as a table."""

from __future__ import annotations

from build_hooks import race
from build_hooks.dataset import Dataset
from build_hooks.page import section


@section
def race_data(data: Dataset) -> str:
    return race.data_script(data)


@section
def race_table(data: Dataset) -> str:
    return race.static_table(data)
