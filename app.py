"""RSR Studio: navigation only (the app ships inside the package, rsr_core/ui). `make app`, `rsr app`, or
`streamlit run app.py` in a checkout."""

import runpy
from pathlib import Path

import rsr_core.ui

runpy.run_path(str(Path(rsr_core.ui.__file__).parent / "app.py"), run_name="__main__")
