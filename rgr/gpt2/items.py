"""The items of protocol E7: GPT-2's most frequent tokens and their frozen embeddings (chapter *GPT-2 block*).

What an :class:`rgr.gpt2.table.ItemTable` holds: :mod:`rgr.gpt2.table`.

Where the table comes from, in order of preference:

1. ``data/gpt2_items.npz`` (+ ``data/gpt2_items.json``): written once by
   ``python -m rgr gpt2 build`` on a machine that can reach the Hugging Face hub
   (or has a local copy, below), then read by every later run and by the book.
   Rows are stored as float16 (``m = 6144`` rows x 768 = ~9 MB compressed): the
   rounding (relative 2^-11) is far below anything the task resolves, and one
   table serves every preset because the smaller item sets are its prefixes.
2. A local directory (argument ``local_dir`` or environment variable
   ``RGR_GPT2_DIR``) in the hub's file layout, for machines without internet::

       model.safetensors                  GPT-2 small's weights (a ``wte`` tensor)
       tokenizer.json | vocab.json + merges.txt
       wiki.train.raw | train.txt | text.txt   WikiText-103 training text (raw)

3. The hub itself (``huggingface_hub`` + ``safetensors`` for the checkpoint,
   ``datasets`` for WikiText-103), only when asked (``build --hub``): book
   chapters never touch the network.

When none of these is there, :func:`load_items` is an error that says how to get one; a config's
``embeddings="stand-in"`` runs on the labelled stand-in of :func:`rgr.gpt2.table.stand_in_items` instead.

Reading GPT-2's checkpoint and tokenizer and counting tokens is in :mod:`rgr.gpt2.sources`.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from ..store import code_version
from .experiment import default_path, gpt2_dir
from .sources import count_tokens, items_from_counts, load_tokenizer, read_wte
from .table import N_TOKENS, ItemTable

_HUB_REPO = "openai-community/gpt2"
_WIKITEXT = ("Salesforce/wikitext", "wikitext-103-raw-v1", "train")
_TEXT_FILES = ("wiki.train.raw", "train.txt", "text.txt")


# ----------------------------------------------------------------------------- building, saving, loading


def _text_lines(path: Path) -> Iterator[str]:
    with open(path, encoding="utf-8") as f:
        yield from f


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def build_items(
    m: int = 6144,
    local_dir: str | Path | None = None,
    hub: bool = False,
    n_tokens: int = N_TOKENS,
    text: str | Path | None = None,
) -> ItemTable:
    """Build the real table: count tokens, pick the m most frequent, read their ``wte`` rows.

    ``local_dir`` (or ``RGR_GPT2_DIR``) points at a local copy in the hub's file
    layout (see the module docstring); ``text`` overrides its text file. With
    ``hub=True`` and no local copy, the checkpoint and tokenizer come from
    ``openai-community/gpt2`` through ``huggingface_hub``'s cache and WikiText-103
    through ``datasets`` (streamed; only the first ``n_tokens`` tokens are read).
    """
    d = gpt2_dir(local_dir)
    if d is not None:
        if not d.is_dir():
            raise FileNotFoundError(f"local GPT-2 directory not found: {d} (argument local_dir or RGR_GPT2_DIR)")
        ckpt = d / "model.safetensors"
        tok = load_tokenizer(d)
        if text is None:
            found = [d / n for n in _TEXT_FILES if (d / n).is_file()]
            if not found:
                raise FileNotFoundError(f"no text to count in {d}: expected one of {_TEXT_FILES} (or pass text=)")
            text = found[0]
        text = Path(text)
        lines: Iterable[str] = _text_lines(text)
        prov = {
            "source": "GPT-2 small (local copy)",
            "checkpoint": str(ckpt.name),
            "checkpoint_sha256": _sha256(ckpt),
            "corpus": f"local text file {text.name}",
            "corpus_sha256": _sha256(text),
        }
    elif hub:
        from huggingface_hub import hf_hub_download

        ckpt = Path(hf_hub_download(_HUB_REPO, "model.safetensors"))
        tok_path = Path(hf_hub_download(_HUB_REPO, "tokenizer.json"))
        tok = load_tokenizer(tok_path.parent)
        import datasets

        name, config, split = _WIKITEXT
        rows = datasets.load_dataset(name, config, split=split, streaming=True)
        lines = (r["text"] for r in rows)
        prov = {
            "source": f"GPT-2 small ({_HUB_REPO})",
            "checkpoint": f"{_HUB_REPO}/model.safetensors",
            "checkpoint_revision": ckpt.parent.name,  # the hub cache's snapshot folder is the commit
            "checkpoint_sha256": _sha256(ckpt),
            "corpus": f"{name} {config} split={split} (datasets {datasets.__version__}, streamed rows)",
        }
    else:
        raise FileNotFoundError(
            "no GPT-2 source: pass local_dir= (or set RGR_GPT2_DIR) to a local copy, or hub=True to download"
        )
    wte = read_wte(ckpt)
    if wte.shape[0] < tok.vocab_size - 1:
        raise ValueError(f"wte has {wte.shape[0]} rows but the tokenizer has {tok.vocab_size} tokens")
    counts, seen = count_tokens(lines, tok, n_tokens)
    if seen < n_tokens:
        warnings.warn(f"the text ran out after {seen} tokens (wanted {n_tokens})", stacklevel=2)
    ids = items_from_counts(counts, m, tok.eos_id)
    prov.update(
        {
            "tokenizer": tok.impl,
            "n_tokens_counted": int(seen),
            "n_tokens_wanted": int(n_tokens),
            "eos_id": int(tok.eos_id),
            "eos_excluded": True,
            "null": "wte[eos_id]",
            "order": "descending count, ties by ascending token id",
            "line_handling": "each text row encoded on its own (newline kept); the row crossing n_tokens is truncated",
            "m": int(m),
            "d_model": int(wte.shape[1]),
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "rgr_git_commit": code_version(),
        }
    )
    return ItemTable(
        token_ids=ids,
        counts=counts[ids],
        tokens=np.array([tok.decode_token(int(i)) for i in ids]),
        embeddings=wte[ids].astype(np.float32),
        null=wte[tok.eos_id].astype(np.float32),
        provenance=prov,
    )


def save_items(table: ItemTable, path: str | Path | None = None, dtype: str = "float16") -> Path:
    """Write the table as a compressed ``.npz`` with a ``.json`` provenance sidecar.

    Rows are stored as ``dtype`` (float16 by default; the provenance records the
    largest rounding error). A stand-in is never written to the default path.
    """
    path = Path(path) if path is not None else default_path()
    if table.is_stand_in and path.resolve() == default_path().resolve():
        raise ValueError("refusing to save a stand-in table as data/gpt2_items.npz (it is not GPT-2)")
    if dtype not in ("float16", "float32"):
        raise ValueError(f"dtype must be 'float16' or 'float32', got {dtype!r}")
    emb = table.embeddings.astype(dtype)
    prov = {
        **table.provenance,
        "stored_dtype": dtype,
        "max_abs_rounding_error": float(np.abs(emb.astype(np.float32) - table.embeddings).max()),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        path,
        token_ids=table.token_ids.astype(np.int64),
        counts=table.counts.astype(np.int64),
        tokens=table.tokens.astype(str),
        embeddings=emb,
        null=table.null.astype(dtype),
        provenance=np.array(json.dumps(prov)),
    )
    prov["npz_sha256"] = _sha256(path)
    path.with_suffix(".json").write_text(json.dumps(prov, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _read_npz(path: Path) -> ItemTable:
    with np.load(path, allow_pickle=False) as z:
        prov = json.loads(str(z["provenance"]))
        return ItemTable(
            token_ids=z["token_ids"].astype(np.int64),
            counts=z["counts"].astype(np.int64),
            tokens=z["tokens"].astype(str),
            embeddings=z["embeddings"].astype(np.float32),
            null=z["null"].astype(np.float32),
            provenance={**prov, "loaded_from": path.name},
        )


def load_items(
    m: int | None = None,
    path: str | Path | None = None,
    local_dir: str | Path | None = None,
) -> ItemTable:
    """The E7 item table, without network: the saved table, else a local copy.

    ``m`` takes the m most frequent items (default: all in the table). The absence of GPT-2 is an error that says
    how to get it.
    """
    p = Path(path) if path is not None else default_path()
    if p.is_file():
        table = _read_npz(p)
    elif gpt2_dir(local_dir) is not None:
        table = build_items(m=m or 6144, local_dir=local_dir)
    else:
        raise FileNotFoundError(
            f"no GPT-2 item table at {p} and RGR_GPT2_DIR is not set. Build it with `python -m rgr gpt2 build --hub` "
            "(needs the Hugging Face hub) or `python -m rgr gpt2 build --dir DIR` (a local copy), "
            "or run on clearly labelled stand-in vectors (a config's embeddings=\"stand-in\")"
        )
    return table.head(m) if m is not None else table
