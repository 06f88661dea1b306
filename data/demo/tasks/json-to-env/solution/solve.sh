#!/bin/bash
python3 - <<'PY'
import json
cfg = json.load(open("/app/config.json"))
fmt = lambda v: str(v).lower() if isinstance(v, bool) else str(v)
open("/app/app.env", "w").write("".join(f"{k.upper()}={fmt(v)}\n" for k, v in sorted(cfg.items())))
PY
