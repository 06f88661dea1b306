"""Names the engine's objects carry so RSR can find its own sandboxes and snapshot images again."""

from __future__ import annotations

LABEL = "rsr.sandbox"
"""Every sandbox container carries this label (value "1")."""
OWNER_LABEL = "rsr.owner_pid"
"""The process id of the process that started the sandbox; `rsr sandbox gc` removes what dead owners left."""
SNAPSHOT_REPOSITORY = "rsr-snapshot"
"""Repository of the images committed from sandboxes (RSRT claims, verifier containers)."""
