"""Engine API calls the docker SDK has no method for, made through the SDK's own HTTP session and its public
attributes (base URL and negotiated API version)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import docker
import docker.errors
import requests


def engine_url(api: docker.APIClient, path: str, *ids: str) -> str:
    """The versioned URL of an engine endpoint; `path` has `{0}`-style slots for the (quoted) ids."""
    return f"{api.base_url}/v{api.api_version}{path.format(*(quote(i, safe='/:') for i in ids))}"


def checked(res: requests.Response, what: str) -> requests.Response:
    """The response, or docker.errors.APIError naming `what` when the engine refused."""
    if res.status_code >= 400:
        raise docker.errors.APIError(f"{what}: HTTP {res.status_code} {res.text[:300]}", res)
    return res


def inspect_with_size(api: docker.APIClient, container_id: str) -> dict[str, Any]:
    """`GET /containers/{id}/json?size=1` (the SDK's inspect_container has no `size` flag)."""
    res = api.get(engine_url(api, "/containers/{0}/json", container_id), params={"size": 1})
    body = checked(res, f"inspect {container_id}").json()
    return body if isinstance(body, dict) else {}
