"""GPT-2's files read: the checkpoint's ``wte``, the byte-level BPE tokenizer, token counts (protocol E7; chapter
*GPT-2 block*).

Reading them needs ``safetensors`` and ``tokenizers`` (the ``gpt2`` extra of pyproject.toml, ``pip install -e
.[gpt2]``), imported inside the functions that use them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .table import N_TOKENS

_EOS_TOKEN = "<|endoftext|>"


def _require(name: str):
    """The optional package ``name`` of the ``gpt2`` extra, or an ImportError that says how to install it."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        raise ImportError(f"reading GPT-2's files needs the {name!r} package: pip install -e .[gpt2]") from None


# ----------------------------------------------------------------------------- checkpoint


def _find_wte(names: Iterable[str]) -> str:
    names = list(names)
    for want in ("wte.weight", "transformer.wte.weight", "wte"):
        if want in names:
            return want
    hits = [n for n in names if n.endswith("wte.weight")]
    if len(hits) == 1:
        return hits[0]
    raise KeyError(f"no token-embedding tensor 'wte.weight' in the checkpoint (has {sorted(names)[:8]}...)")


class _SourceError(ValueError):
    """A GPT-2 file (checkpoint or tokenizer) that cannot be read; the message names the file."""


def _named(path: Path, what: str, e: Exception) -> _SourceError:
    detail = " ".join(f"{type(e).__name__}: {e}".split())[:300]
    via = " (found through RGR_GPT2_DIR)" if os.environ.get("RGR_GPT2_DIR") and str(path).startswith(
        os.environ["RGR_GPT2_DIR"]) else ""
    return _SourceError(f"{path}{via}: cannot read GPT-2's {what} ({detail}); restore the file or fetch a fresh copy")


def read_wte(path: str | Path) -> np.ndarray:
    """GPT-2's token-embedding matrix (vocab, d_model) float32 from a ``.safetensors`` file (:class:`_SourceError`
    naming the file when it is damaged)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint not found: {path}")
    safetensors = _require("safetensors")
    try:
        with safetensors.safe_open(str(path), framework="np") as f:
            return np.asarray(f.get_tensor(_find_wte(f.keys())), dtype=np.float32)
    except Exception as e:  # damaged bytes surface as many types (safetensors' own, KeyError): one, named
        raise _named(path, "checkpoint", e) from None


# ----------------------------------------------------------------------------- tokenizer


@dataclass(frozen=True)
class _Tokenizer:
    """What the loader needs of a tokenizer: encode many lines, the EOS id, a description."""

    encode_batch: Callable[[list[str]], list[list[int]]]
    eos_id: int
    vocab_size: int
    impl: str
    decode_token: Callable[[int], str]


def load_tokenizer(directory: str | Path) -> _Tokenizer:
    """GPT-2's tokenizer (the ``tokenizers`` package) from ``tokenizer.json`` or ``vocab.json`` + ``merges.txt`` in
    ``directory``."""
    d = Path(directory)
    tj, vj, mt = d / "tokenizer.json", d / "vocab.json", d / "merges.txt"
    if not (tj.is_file() or (vj.is_file() and mt.is_file())):
        raise FileNotFoundError(f"no tokenizer in {d}: need tokenizer.json, or vocab.json and merges.txt")
    tokenizers = _require("tokenizers")
    try:
        if tj.is_file():
            tok = tokenizers.Tokenizer.from_file(str(tj))
            impl = f"tokenizers {tokenizers.__version__} (tokenizer.json)"
        else:
            tok = tokenizers.ByteLevelBPETokenizer(str(vj), str(mt))
            tok.add_special_tokens([_EOS_TOKEN])
            impl = f"tokenizers {tokenizers.__version__} (vocab.json + merges.txt)"
    except Exception as e:  # the tokenizers package raises a bare Exception on a damaged file: one, named
        raise _named(tj if tj.is_file() else d, "tokenizer", e) from None
    eos = tok.token_to_id(_EOS_TOKEN)
    if eos is None:
        raise _SourceError(f"tokenizer in {d} has no {_EOS_TOKEN} token")
    return _Tokenizer(
        encode_batch=lambda lines: [e.ids for e in tok.encode_batch(lines, add_special_tokens=False)],
        eos_id=int(eos),
        vocab_size=int(tok.get_vocab_size()),
        impl=impl,
        decode_token=lambda i: tok.decode([i]),
    )


# ----------------------------------------------------------------------------- counting


def count_tokens(
    lines: Iterable[str], tok: _Tokenizer, n_tokens: int = N_TOKENS, chunk: int = 1000
) -> tuple[np.ndarray, int]:
    """Token counts (vocab_size,) over the first ``n_tokens`` tokens of ``lines``.

    Each line (a WikiText row, newline included) is encoded on its own, in order;
    the line that crosses ``n_tokens`` contributes only its first tokens.
    Returns the counts and the number of tokens counted (< n_tokens if the text ran out).
    """
    if n_tokens < 1:
        raise ValueError(f"n_tokens must be >= 1, got {n_tokens}")
    counts = np.zeros(tok.vocab_size, dtype=np.int64)
    seen = 0

    def batches() -> Iterator[list[str]]:
        buf: list[str] = []
        for line in lines:
            buf.append(line)
            if len(buf) == chunk:
                yield buf
                buf = []
        if buf:
            yield buf

    for batch in batches():
        for ids in tok.encode_batch(batch):
            take = ids[: n_tokens - seen]
            if take:
                counts += np.bincount(np.asarray(take, dtype=np.int64), minlength=tok.vocab_size)
                seen += len(take)
            if seen >= n_tokens:
                return counts, seen
    return counts, seen


def items_from_counts(counts: np.ndarray, m: int, eos_id: int) -> np.ndarray:
    """The m most frequent token ids, EOS excluded, by descending count then ascending id."""
    order = np.lexsort((np.arange(len(counts)), -counts))
    order = order[order != eos_id]
    if m > len(order) or counts[order[m - 1]] == 0:
        n = int((counts[order] > 0).sum())
        raise ValueError(f"m={m} exceeds the {n} distinct tokens seen in the text; count more text or lower m")
    return order[:m].astype(np.int64)
