"""Fixtures of the job tests: the rewrite tests' seeded database (one task, one successful discovery run)."""

from tests.rewrite.conftest import seeded  # noqa: F401 - a fixture shared with the rewrite tests


def pytest_configure(config):
    """The marker of the tests that start a local Ray cluster."""
    config.addinivalue_line("markers", "ray: starts a local Ray cluster (make test installs the [ray] extra)")
