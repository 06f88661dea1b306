"""The compiled modules: the per-step work of an ingest in C, each the C build of Python code that stays its
definition: the depth check of a parsed file (rsr_core/formats/_depth.c, of `reading.too_deep`), reading ATIF steps
(rsr_core/formats/_steps.c, of `atif_read.parse_steps`) and building their rows (rsr_core/store/_rows*.c, of
`arrow_rows.located_tables`).

Optional: where they cannot be built (no C compiler), the package installs without them and the Python code does
all of it."""

from setuptools import Extension, setup

MODULES = {
    "rsr_core.formats._depth": ["rsr_core/formats/_depth.c"],
    "rsr_core.formats._steps": ["rsr_core/formats/_steps.c"],
    "rsr_core.store._rows": [
        "rsr_core/store/_rows.c",
        "rsr_core/store/_rows_common.c",
        "rsr_core/store/_rows_terms.c",
        "rsr_core/store/_rows_training.c",
        "rsr_core/store/_rows_columns.c",
    ],
}
HEADERS = {"rsr_core.store._rows": ["rsr_core/store/_rows.h"]}

setup(
    ext_modules=[
        Extension(
            name,
            sources,
            depends=HEADERS.get(name, []),
            optional=True,
            extra_compile_args=["-O2", "-fvisibility=hidden"],
        )
        for name, sources in MODULES.items()
    ]
)
