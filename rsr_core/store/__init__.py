"""DuckDB storage: schema, migrations, bulk writes and queries."""

from rsr_core.store.queries import TrajectoryFilter
from rsr_core.store.store import (
    Store,
    StoreBusyError,
    StoreDamagedError,
    StoreForeignError,
    StoreVersionError,
    connect,
)

__all__ = [
    "Store",
    "StoreBusyError",
    "StoreDamagedError",
    "StoreForeignError",
    "StoreVersionError",
    "TrajectoryFilter",
    "connect",
]
