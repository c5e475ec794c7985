"""GPT-2's files read without the hub's libraries: the checkpoint's ``wte``, the byte-level BPE tokenizer,
token counts (protocol E7; chapter *GPT-2 block*).

The heavy optional packages (``safetensors``, ``tokenizers``, ``regex``) are imported inside the functions
that use them; the ``gpt2`` extra of pyproject.toml pins them. Without them, a local directory
still works: the safetensors header is parsed with numpy, and GPT-2's byte-level
BPE has a small pure-Python implementation (:class:`_BytePairEncoder`).
"""

from __future__ import annotations

import json
import math
import os
import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .table import N_TOKENS

_EOS_TOKEN = "<|endoftext|>"


# ----------------------------------------------------------------------------- checkpoint


_ST_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}


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
    try:
        return _read_wte(path)
    except Exception as e:  # damaged bytes surface as many types (struct, json, safetensors' own): one, named
        raise _named(path, "checkpoint", e) from None


def _read_wte(path: Path) -> np.ndarray:
    """GPT-2's token-embedding matrix (vocab, d_model) float32 from a ``.safetensors`` file.

    Uses the ``safetensors`` package when installed; otherwise reads the format
    directly (an 8-byte little-endian header length, a JSON header of
    ``name -> {dtype, shape, data_offsets}``, then the raw bytes).
    """
    try:
        from safetensors import safe_open
    except ImportError:
        safe_open = None
    if safe_open is not None:
        with safe_open(str(path), framework="np") as f:
            return np.asarray(f.get_tensor(_find_wte(f.keys())), dtype=np.float32)
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        name = _find_wte(k for k in header if k != "__metadata__")
        info = header[name]
        if info["dtype"] not in _ST_DTYPES:
            raise ValueError(f"unsupported safetensors dtype {info['dtype']} for {name}")
        start, stop = info["data_offsets"]
        f.seek(8 + n + start)
        buf = f.read(stop - start)
    arr = np.frombuffer(buf, dtype=np.dtype(_ST_DTYPES[info["dtype"]]).newbyteorder("<"))
    return arr.reshape(info["shape"]).astype(np.float32)


# ----------------------------------------------------------------------------- tokenizer


def _byte_alphabet() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character map: printable Latin-1 bytes map to
    themselves, the other bytes to the characters 256, 257, ... in byte order."""
    keep = {*range(ord("!"), ord("~") + 1), *range(ord("\xa1"), ord("\xac") + 1), *range(ord("\xae"), 256)}
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


_GPT2_SPLIT = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
# The standard library's re has no \p{..}: letters are "word characters that are not
# digits or _", numbers are \d. Exact on ASCII text; a close approximation elsewhere.
_GPT2_SPLIT_STDLIB = r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+"""


class _BytePairEncoder:
    """GPT-2's byte-level BPE in pure Python (a fallback when ``tokenizers`` is missing).

    Text is split by GPT-2's pre-tokenization pattern, each piece's UTF-8 bytes
    are mapped to printable characters, and the merges are applied lowest rank
    first (all occurrences of the best pair at once) until none applies.
    The special token ``<|endoftext|>`` in the text is kept as one token.
    """

    def __init__(self, vocab: dict[str, int], merges: list[tuple[str, str]]):
        self.vocab = vocab
        self.ranks = {pair: i for i, pair in enumerate(merges)}
        self.alphabet = _byte_alphabet()
        self._cache: dict[str, list[int]] = {}
        try:
            import regex

            self._split = regex.compile(_GPT2_SPLIT)
            self.impl = "python-bpe (regex)"
        except ImportError:
            import re

            self._split = re.compile(_GPT2_SPLIT_STDLIB)
            self.impl = "python-bpe (stdlib re: exact on ASCII)"

    def _merge(self, piece: str) -> list[int]:
        parts = list(piece)
        while len(parts) > 1:
            rank, i = min((self.ranks.get(p, math.inf), i) for i, p in enumerate(zip(parts, parts[1:])))
            if rank == math.inf:
                break
            a, b = parts[i], parts[i + 1]
            out, j = [], 0
            while j < len(parts):
                if j + 1 < len(parts) and parts[j] == a and parts[j + 1] == b:
                    out.append(a + b)
                    j += 2
                else:
                    out.append(parts[j])
                    j += 1
            parts = out
        return [self.vocab[p] for p in parts]

    def encode(self, text: str) -> list[int]:
        ids: list[int] = []
        for k, chunk in enumerate(text.split(_EOS_TOKEN)):
            if k:
                ids.append(self.vocab[_EOS_TOKEN])
            for word in self._split.findall(chunk):
                if word not in self._cache:
                    self._cache[word] = self._merge("".join(self.alphabet[b] for b in word.encode("utf-8")))
                ids.extend(self._cache[word])
        return ids


@dataclass(frozen=True)
class _Tokenizer:
    """What the loader needs of a tokenizer: encode many lines, the EOS id, a description."""

    encode_batch: Callable[[list[str]], list[list[int]]]
    eos_id: int
    vocab_size: int
    impl: str
    decode_token: Callable[[int], str]


def _read_merges(lines: Iterable[str]) -> list[tuple[str, str]]:
    out = []
    for line in lines:
        line = line.rstrip("\n")
        if not line or line.startswith("#version"):
            continue
        a, b = line.split(" ")
        out.append((a, b))
    return out


def load_tokenizer(directory: str | Path) -> _Tokenizer:
    """GPT-2's tokenizer from ``tokenizer.json`` or ``vocab.json`` + ``merges.txt`` in ``directory``.

    With the ``tokenizers`` package installed it does the work; otherwise
    :class:`_BytePairEncoder` reads the same files.
    """
    d = Path(directory)
    tj, vj, mt = d / "tokenizer.json", d / "vocab.json", d / "merges.txt"
    if not (tj.is_file() or (vj.is_file() and mt.is_file())):
        raise FileNotFoundError(f"no tokenizer in {d}: need tokenizer.json, or vocab.json and merges.txt")
    try:
        return _load_tokenizer(d, tj, vj, mt)
    except _SourceError:
        raise
    except Exception as e:  # the tokenizers package raises a bare Exception on a damaged file: one, named
        raise _named(tj if tj.is_file() else d, "tokenizer", e) from None


def _load_tokenizer(d: Path, tj: Path, vj: Path, mt: Path) -> _Tokenizer:
    try:
        import tokenizers
    except ImportError:
        tokenizers = None
    if tokenizers is not None:
        if tj.is_file():
            tok = tokenizers.Tokenizer.from_file(str(tj))
            impl = f"tokenizers {tokenizers.__version__} (tokenizer.json)"
        else:
            tok = tokenizers.ByteLevelBPETokenizer(str(vj), str(mt))
            tok.add_special_tokens([_EOS_TOKEN])
            impl = f"tokenizers {tokenizers.__version__} (vocab.json + merges.txt)"
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
    if tj.is_file():
        model = json.loads(tj.read_text(encoding="utf-8"))["model"]
        vocab = dict(model["vocab"])
        merges = [tuple(mm) if isinstance(mm, list) else tuple(mm.split(" ")) for mm in model["merges"]]
        for added in json.loads(tj.read_text(encoding="utf-8")).get("added_tokens", []):
            vocab.setdefault(added["content"], added["id"])
    else:
        vocab = json.loads(vj.read_text(encoding="utf-8"))
        merges = _read_merges(mt.read_text(encoding="utf-8").splitlines())
    if _EOS_TOKEN not in vocab:
        raise _SourceError(f"tokenizer in {d} has no {_EOS_TOKEN} token")
    bpe = _BytePairEncoder(vocab, merges)
    inverse = {i: s for s, i in vocab.items()}
    unbyte = {c: b for b, c in bpe.alphabet.items()}

    def decode_token(i: int) -> str:
        s = inverse[i]
        if s == _EOS_TOKEN:
            return s
        return bytes(unbyte[c] for c in s).decode("utf-8", errors="replace")

    return _Tokenizer(
        encode_batch=lambda lines: [bpe.encode(t) for t in lines],
        eos_id=int(vocab[_EOS_TOKEN]),
        vocab_size=max(vocab.values()) + 1,
        impl=bpe.impl,
        decode_token=decode_token,
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
