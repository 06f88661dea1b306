"""Export for fine-tuning: SFT chat JSONL, ShareGPT, Parquet and ATIF, only what should train, with provenance.

`preview(store, filters)` counts what would be exported and why the rest is left out; `export(store, fmt, out,
filters)` streams it to `out` and writes a dataset card beside it.
"""

from rsr_core.export.models import FORMATS, ExportFilters, ExportPreview, ExportSummary, LeftOut
from rsr_core.export.service import export, preview
from rsr_core.export.writers import ExportError

__all__ = [
    "FORMATS",
    "ExportError",
    "ExportFilters",
    "ExportPreview",
    "ExportSummary",
    "LeftOut",
    "export",
    "preview",
]
