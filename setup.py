"""The one compiled module: the per-step rows of an ingest in C (rsr_core/store/_rows.c).

Optional: where it cannot be built (no C compiler), the package installs without it and the same rows are
built in Python (rsr_core/store/arrow_rows.py)."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "rsr_core.store._rows", ["rsr_core/store/_rows.c"], optional=True, extra_compile_args=["-O2"]
        )
    ]
)
