"""Loads our exports with the trainers' own libraries; run by the `trainer` side venv's Python (see conftest.py),
never imported by the suite. Prints one JSON object; any failure of the libraries is a non-zero exit with their
traceback on stderr.

    trainer_check.py load SPEC.json CACHE_DIR   datasets: every load and concatenation SPEC names
    trainer_check.py mask ROWS.jsonl            transformers: the assistant mask of every row's chat template
    trainer_check.py tools ROWS.jsonl           transformers: rows with tool calls through a template with tools=
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import datasets
from huggingface_hub import DatasetCard


def _described(ds: datasets.Dataset) -> dict:
    return {
        "rows": ds.num_rows,
        "features": {name: repr(feature) for name, feature in ds.features.items()},
        "trajectory_ids": list(ds["trajectory_id"]),
        "first": ds[0] if ds.num_rows else None,
    }


def _declared(card: str) -> datasets.Features:
    """The features a dataset card declares, read as the Hub reads them."""
    data = DatasetCard.load(card).data
    return datasets.info.DatasetInfosDict.from_dataset_card_data(data)["default"].features


def load(spec_path: str, cache: str) -> dict:
    """SPEC: {"loads": {name: {"builder": "json"|"parquet", "data_files": [..], "features_card"?: card path}
    | {"dir": path}}, "concatenate": {name: [load names]}, "cards": {name: card path}}. A load with a
    `features_card` passes the features that card declares (`features=`). Each card is read as the Hub reads it
    and its declared features are compared with what `datasets` loaded under the same name."""
    spec = json.loads(Path(spec_path).read_text())
    out: dict = {"loads": {}, "concatenate": {}, "cards": {}}
    loaded: dict[str, datasets.Dataset] = {}
    for name, how in spec["loads"].items():
        if "dir" in how:
            ds = datasets.load_dataset(how["dir"], split="train", cache_dir=cache)
        else:
            features = _declared(how["features_card"]) if "features_card" in how else None
            ds = datasets.load_dataset(
                how["builder"],
                data_files=how["data_files"],
                split="train",
                cache_dir=cache,
                features=features,
            )
        loaded[name] = ds
        out["loads"][name] = _described(ds)
    for name, parts in spec.get("concatenate", {}).items():
        out["concatenate"][name] = _described(datasets.concatenate_datasets([loaded[p] for p in parts]))
    for name, card in spec.get("cards", {}).items():
        data = DatasetCard.load(card).data
        declared = _declared(card)
        meta = data.to_dict()
        out["cards"][name] = {
            "declared_equals_loaded": declared == loaded[name].features,
            "declared": {k: repr(v) for k, v in declared.items()},
            "configs": meta["configs"],
            "license": meta.get("license"),
            "tags": meta.get("tags"),
            "task_categories": meta.get("task_categories"),
        }
    return out


CHATML = (
    "{%- for message in messages %}"
    "{%- if message['role'] == 'assistant' %}"
    "{{- '<|im_start|>assistant\\n' }}{% generation %}{{- message['content'] + '<|im_end|>' }}{% endgeneration %}"
    "{{- '\\n' }}"
    "{%- else %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)
"""ChatML, with the assistant's part of each turn inside `{% generation %}`: what the mask must cover."""
SPECIALS = ["<|im_start|>", "<|im_end|>", "<|pad|>"]


def _tokenizer(texts: list[str]):
    """A byte-level BPE trained here on the rows' own text (decoding gives the text back exactly), wrapped as
    a transformers fast tokenizer with the ChatML template: nothing downloaded."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600, special_tokens=SPECIALS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(texts, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|pad|>")
    fast.chat_template = CHATML
    return fast


def _spans(ids: list[int], mask: list[int]) -> list[list[int]]:
    spans: list[list[int]] = []
    for i, (token, on) in enumerate(zip(ids, mask, strict=True)):
        if on and (i == 0 or not mask[i - 1]):
            spans.append([])
        if on:
            spans[-1].append(token)
    return spans


SHAREGPT_ROLES = {"system": "system", "human": "user", "gpt": "assistant"}
"""The role map the README gives Axolotl and LLaMA-Factory for our ShareGPT rows."""


def _messages(row: dict) -> list[dict]:
    if "messages" in row:
        return row["messages"]
    return [{"role": SHAREGPT_ROLES[t["from"]], "content": t["value"]} for t in row["conversations"]]


def mask(rows_path: str) -> dict:
    """Per row (chat `messages`, or ShareGPT `conversations` mapped by the README's role map): the roles, the
    text under the assistant mask (one span per masked run of tokens), and each assistant turn's content as the
    template ends it."""
    rows = [json.loads(line) for line in Path(rows_path).read_text(encoding="utf-8").splitlines()]
    rows = [{**r, "messages": _messages(r)} for r in rows]
    tok = _tokenizer([m["content"] for r in rows for m in r["messages"]])
    out = []
    for r in rows:
        enc = tok.apply_chat_template(
            r["messages"], tokenize=True, return_dict=True, return_assistant_tokens_mask=True
        )
        ids, masked = list(enc["input_ids"]), list(enc["assistant_masks"])
        out.append(
            {
                "trajectory_id": r["trajectory_id"],
                "roles": [m["role"] for m in r["messages"]],
                "tokens": len(ids),
                "masked": sum(masked),
                "spans": [tok.decode(s) for s in _spans(ids, masked)],
                "assistant": [m["content"] + "<|im_end|>" for m in r["messages"] if m["role"] == "assistant"],
                "whole": tok.decode(ids) == tok.apply_chat_template(r["messages"], tokenize=False),
            }
        )
    return {"transformers": __import__("transformers").__version__, "rows": out}


TOOL_CHATML = (
    "{%- if tools %}<|im_start|>system\n# Tools\n{%- for tool in tools %}\n{{ tool | tojson }}{%- endfor %}"
    "<|im_end|>\n{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message['role'] == 'assistant' %}"
    "{{- '<|im_start|>assistant\\n' }}{% generation %}{{- message['content'] }}"
    "{%- for call in message['tool_calls'] or [] %}"
    "{{- '<tool_call>' + call['function']['name'] + ' ' + call['function']['arguments'] + '</tool_call>' }}"
    "{%- endfor %}{{- '<|im_end|>' }}{% endgeneration %}{{- '\\n' }}"
    "{%- elif message['role'] == 'tool' %}"
    "{{- '<|im_start|>tool\\n<tool_response id=' + message['tool_call_id'] + '>' + message['content'] }}"
    "{{- '</tool_response><|im_end|>\\n' }}"
    "{%- else %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
)
"""ChatML with tools as Qwen-style templates write them: the tool list first, each assistant call as
`<tool_call>`, each result as a `tool` turn tied to its call id; assistant parts inside `{% generation %}`."""


def tools(rows_path: str) -> dict:
    """Per row with tool calls: the text `apply_chat_template(messages, tools=json.loads(row["tools"]))`
    renders, and the text under the assistant mask."""
    rows = [json.loads(line) for line in Path(rows_path).read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if any(m["tool_calls"] for m in r["messages"])]
    tok = _tokenizer([m["content"] for r in rows for m in r["messages"]] + [r["tools"] for r in rows])
    tok.chat_template = TOOL_CHATML
    out = []
    for r in rows:
        listed = json.loads(r["tools"])
        text = tok.apply_chat_template(r["messages"], tools=listed, tokenize=False)
        enc = tok.apply_chat_template(
            r["messages"], tools=listed, tokenize=True, return_dict=True, return_assistant_tokens_mask=True
        )
        ids, masked = list(enc["input_ids"]), list(enc["assistant_masks"])
        out.append(
            {
                "trajectory_id": r["trajectory_id"],
                "text": text,
                "spans": [tok.decode(s) for s in _spans(ids, masked)],
            }
        )
    return {"rows": out}


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    result = {"load": load, "mask": mask, "tools": tools}[command](*args)
    print(json.dumps(result, default=str))
