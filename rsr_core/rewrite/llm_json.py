"""Asking a model for JSON that must validate, feeding validation errors back for a retry."""

from __future__ import annotations

import json
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from rsr_core.errors import RsrError
from rsr_core.formats.terminus import ProtocolError, extract_json_object
from rsr_core.harness.context import fit_request
from rsr_core.protocols import LLM, Completion

M = TypeVar("M", bound=BaseModel)


class ModelOutputError(RsrError):
    """The model did not produce valid JSON after the retries."""


def _problem(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'root'}: {e['msg']}" for e in exc.errors()[:5]
        )
    return str(exc)


def ask_json(
    llm: LLM,
    model: str,
    messages: list[dict[str, str]],
    schema: type[M],
    temperature: float = 0.0,
    seed: int | None = None,
    retries: int = 2,
) -> tuple[M, list[Completion]]:
    """One validated answer; each invalid answer is shown back with the error (up to `retries` times). Every
    request fits the model's context (`fit_request`) and carries the answer budget left."""
    calls: list[Completion] = []
    convo = list(messages)
    limits = llm.limits(model)
    for _ in range(retries + 1):
        request, max_tokens = fit_request(convo, limits)
        completion = llm.complete(request, model, temperature, seed, max_tokens)
        calls.append(completion)
        try:
            obj, _ = extract_json_object(completion.text, tuple(schema.model_fields))
            return schema.model_validate(obj), calls
        except (ProtocolError, ValidationError) as exc:
            problem = _problem(exc)
        convo = [
            *convo,
            {"role": "assistant", "content": completion.text},
            {
                "role": "user",
                "content": f"That answer is not valid: {problem}. Answer again with one JSON "
                f"object of this shape: {json.dumps(_shape(schema))}",
            },
        ]
    raise ModelOutputError(f"{model} gave no valid {schema.__name__} after {retries + 1} tries: {problem}")


def _shape(schema: type[BaseModel]) -> dict:
    return {name: str(field.annotation) for name, field in schema.model_fields.items()}
