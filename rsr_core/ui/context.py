"""The app's one cached factory of services. Pages call `app_services()` and never build clients or SQL."""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rsr_core.settings import Settings
from rsr_core.store import Store

if TYPE_CHECKING:  # the model client, the job runner and Docker are imported when first used, not on start
    from rsr_core.llm.client import LLMClient
    from rsr_core.llm.scripted_server import ScriptedServer
    from rsr_core.services import Services
    from rsr_core.ui.jobs import JobManager

DEMO_MODELS = {
    "planner": "scripted-demo-planner",
    "critic": "scripted-demo-critic",
    "executor": "scripted-demo-executor",
}


@dataclass
class AppServices:
    """Everything a page needs, shared by all sessions of the app process."""

    settings: Settings
    _store: Store
    scripted: ScriptedServer | None = None
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _jobs: JobManager | None = None
    _services: Services | None = None

    @property
    def services(self) -> Services:
        """The CLI's service factory over this store (Docker and the model client behind it load on first use)."""
        with self._lock:
            if self._services is None:
                from rsr_core.services import Services

                self._services = Services(self.settings, store=self._store)
            return self._services

    @property
    def jobs(self) -> JobManager:
        """The rewrite jobs this process runs (the job machinery is imported on first use)."""
        with self._lock:
            if self._jobs is None:
                from rsr_core.ui.jobs import JobManager

                self._jobs = JobManager(self.store, lambda: self.services.sandboxes)
            return self._jobs

    @property
    def store(self) -> Store:
        """The store, opened per use and never held (the CLI and job drivers write the same file)."""
        return self._store

    def llm_for(self, base_url: str | None, api_key: str | None) -> LLMClient:
        """A client for the endpoint the user chose (the configured one by default), built as the CLI's and a
        worker's are (`LLMClient.from_settings`: LLMError saying how to configure one when there is none)."""
        from rsr_core.llm.client import LLMClient

        return LLMClient.from_settings(self.settings, base_url, api_key)

    def start_scripted_demo(self) -> str:
        """Start the project's scripted demo model in this process (once); returns its URL."""
        from rsr_core.demo import DEMO_SCRIPT
        from rsr_core.llm.scripted_server import ScriptedServer

        with self._lock:
            if self.scripted is None:
                self.scripted = ScriptedServer(DEMO_SCRIPT).start()
            return self.scripted.url


def build_app_services(db_path: str | None = None) -> AppServices:
    """Create the services for a database (raises StoreBusyError when another process holds it)."""
    settings = Settings.from_env()
    if db_path:
        settings = settings.model_copy(update={"db_path": db_path})
    # Opened (and migrated) now, so a busy database is reported before any page renders; the same store and
    # wait as the CLI's (rsr_core/services.py).
    store = Store(
        settings.db_path,
        wait_s=settings.db_wait_s,
        on_wait=lambda m: print(f"rsr: {m}", file=sys.stderr, flush=True),
    )
    return AppServices(settings, store)
