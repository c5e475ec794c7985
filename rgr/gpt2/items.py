"""The items of protocol E7: GPT-2's most frequent tokens and their frozen embeddings (chapter *GPT-2 block*).

An :class:`ItemTable` holds the ``m`` items (token ids, ordered by descending
count, ties by id), their counts, GPT-2 small's token-embedding rows ``wte`` for
them, and ``NULL = wte[EOS]``. Because the rows are ordered by frequency, the
item set for any smaller ``m`` is a prefix of the table (:meth:`ItemTable.head`).

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

When none of these is there, :func:`load_items` returns (when allowed) a
*stand-in*: seeded random vectors with some of GPT-2's geometry — a shared mean
direction, an anisotropic spectrum, row norms of a few units — whose provenance
says ``source = "stand-in (not GPT-2)"``. It is a placeholder so that the
pipeline runs everywhere; results on it are not results about GPT-2.

The heavy optional packages (``huggingface_hub``, ``safetensors``, ``datasets``,
``tokenizers``, ``regex``) are imported inside the functions that use them; the
``gpt2`` extra of pyproject.toml pins them. Without them, a local directory
still works: the safetensors header is parsed with numpy, and GPT-2's byte-level
BPE has a small pure-Python implementation (:class:`BytePairEncoder`).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import os
import struct
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

from ..paths import data_dir
from ..store import code_version
from ..task.embeddings import from_array
from ..task.rng import derive_seed, stream_key, uniform

__all__ = [
    "STAND_IN_SOURCE",
    "HUB_REPO",
    "WIKITEXT",
    "ItemTable",
    "StandInSpec",
    "stand_in_items",
    "read_wte",
    "load_tokenizer",
    "BytePairEncoder",
    "count_tokens",
    "items_from_counts",
    "build_items",
    "save_items",
    "load_items",
    "items_available",
    "embedding_stats",
    "default_path",
]

STAND_IN_SOURCE = "stand-in (not GPT-2)"
HUB_REPO = "openai-community/gpt2"
WIKITEXT = ("Salesforce/wikitext", "wikitext-103-raw-v1", "train")
EOS_TOKEN = "<|endoftext|>"
TEXT_FILES = ("wiki.train.raw", "train.txt", "text.txt")
N_TOKENS = 10_000_000  # protocol E7: the first 10M GPT-2 tokens of WikiText-103 train


# ----------------------------------------------------------------------------- the table


@dataclass(frozen=True, eq=False)
class ItemTable:
    """The m items of E7 with their GPT-2 embedding rows and where they came from.

    ``token_ids`` (m,) int64, ``counts`` (m,) int64 (descending), ``tokens``
    (m,) str, ``embeddings`` (m, d_model) float32, ``null`` (d_model,) float32,
    ``provenance`` a JSON-able dict whose ``source`` names the origin.
    """

    token_ids: np.ndarray
    counts: np.ndarray
    tokens: np.ndarray
    embeddings: np.ndarray
    null: np.ndarray
    provenance: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        m = self.embeddings.shape[0]
        for name in ("token_ids", "counts", "tokens"):
            if getattr(self, name).shape != (m,):
                raise ValueError(f"{name} must have shape ({m},), got {getattr(self, name).shape}")
        if self.null.shape != (self.embeddings.shape[1],):
            raise ValueError(f"null must have shape ({self.embeddings.shape[1]},), got {self.null.shape}")
        if "source" not in self.provenance:
            raise ValueError("provenance must say its 'source'")

    @property
    def m(self) -> int:
        return int(self.embeddings.shape[0])

    @property
    def d_model(self) -> int:
        return int(self.embeddings.shape[1])

    @property
    def source(self) -> str:
        return str(self.provenance["source"])

    @property
    def is_stand_in(self) -> bool:
        return self.source == STAND_IN_SOURCE

    def head(self, m: int) -> "ItemTable":
        """The m most frequent items (a prefix of the table)."""
        if not isinstance(m, (int, np.integer)) or isinstance(m, bool) or not 1 <= m <= self.m:
            raise ValueError(f"m must be an integer in [1, {self.m}] (the table's size), got {m!r}")
        return replace(
            self,
            token_ids=self.token_ids[:m],
            counts=self.counts[:m],
            tokens=self.tokens[:m],
            embeddings=self.embeddings[:m],
            provenance={**self.provenance, "m": int(m)},
        )

    def table(self, device: torch.device | str = "cpu") -> torch.Tensor:
        """E of protocol E7: (m + 1, d_model) float32, the items' rows then NULL (index m)."""
        e = from_array(np.concatenate([self.embeddings, self.null[None]], axis=0).astype(np.float32))
        return e.to(device)


def default_path() -> Path:
    """Where the real table lives: ``data/gpt2_items.npz`` (sidecar ``.json`` next to it)."""
    return data_dir() / "gpt2_items.npz"


# ----------------------------------------------------------------------------- the stand-in


@dataclass(frozen=True)
class StandInSpec:
    """The stand-in's geometry. Hand-set from the broad shape of GPT-2's ``wte``
    (a common offset shared by all rows, a decaying spectrum, norms of a few
    units); not fitted to GPT-2. :func:`embedding_stats` measures the same
    quantities on any table, so a real table can be compared with it.
    """

    d_model: int = 768
    norm: float = 3.5  # median row norm
    norm_spread: float = 0.1  # sd of log row norm
    mean_share: float = 0.3  # |mean direction|^2 / E|row|^2 before norming (≈ mean cosine of two rows)
    spectrum_decay: float = 0.5  # variance of the j-th principal direction ∝ (j + 1) ** -decay
    seed: int = 0


_NULL_INDEX = 1 << 40  # the stand-in NULL's counter index: past any item row


def _gaussians(seed: int, index: torch.Tensor, n: int) -> torch.Tensor:
    """Standard normals (len(index), n) float64: row i depends only on (seed, index[i]) (Box–Muller)."""
    keys = torch.tensor([stream_key(seed, "embed")], dtype=torch.int64)
    u = uniform(keys, index[None].to(torch.int64), 2 * n)[0]  # (k, 2n)
    r = torch.sqrt(-2.0 * torch.log1p(-u[:, :n]))
    return r * torch.cos(2 * math.pi * u[:, n:])


def stand_in_items(m: int, spec: StandInSpec = StandInSpec()) -> ItemTable:
    """A seeded stand-in table (NOT GPT-2): rows ``mu + Q diag(sqrt(lam)) z``, then scaled to
    log-normal norms. Row i depends only on (spec, i), so smaller m give prefixes.
    Counts are a synthetic Zipf law; token ids are 0..m-1; tokens read ``<stand-in i>``.
    """
    if not isinstance(m, (int, np.integer)) or isinstance(m, bool) or m < 1:
        raise ValueError(f"m must be an integer >= 1, got {m!r}")
    d = spec.d_model
    if not isinstance(d, int) or d < 2:
        raise ValueError(f"spec.d_model must be an integer >= 2, got {d!r}")
    if not 0.0 <= spec.mean_share < 1.0:
        raise ValueError(f"spec.mean_share must be in [0, 1), got {spec.mean_share}")
    g = torch.Generator().manual_seed(derive_seed(spec.seed, "embed"))
    basis, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))  # (d, d) orthogonal
    mu = torch.randn(d, generator=g, dtype=torch.float64)
    mu = mu / mu.norm() * math.sqrt(spec.mean_share)
    lam = (torch.arange(d, dtype=torch.float64) + 1.0) ** -spec.spectrum_decay
    lam = lam / lam.sum() * (1.0 - spec.mean_share)  # total variance + |mu|^2 = 1

    idx = torch.cat([torch.arange(m, dtype=torch.int64), torch.tensor([_NULL_INDEX])])
    z = _gaussians(spec.seed, idx, d + 1)  # (m+1, d+1): d for the direction, 1 for the norm
    x = mu + (z[:, :d] * lam.sqrt()) @ basis.T  # (m+1, d)
    norms = spec.norm * torch.exp(spec.norm_spread * z[:, d])
    x = x / x.norm(dim=1, keepdim=True) * norms[:, None]

    zipf = 1.0 / np.arange(1, m + 1)
    counts = np.floor(N_TOKENS * zipf / (np.log(50257) + 0.5772)).astype(np.int64)
    prov = {
        "source": STAND_IN_SOURCE,
        "note": "seeded random vectors with GPT-2-like geometry; NOT GPT-2's embeddings; counts are synthetic (Zipf)",
        "how_to_use_gpt2": "python -m rgr gpt2 build  (needs the hub, or RGR_GPT2_DIR with a local copy)",
        "stand_in_spec": {k: getattr(spec, k) for k in spec.__dataclass_fields__},
        "m": int(m),
        "d_model": int(d),
    }
    return ItemTable(
        token_ids=np.arange(m, dtype=np.int64),
        counts=counts,
        tokens=np.array([f"<stand-in {i}>" for i in range(m)]),
        embeddings=x[:m].float().numpy(),
        null=x[m].float().numpy(),
        provenance=prov,
    )


def embedding_stats(e: np.ndarray | torch.Tensor, max_rows: int = 2048) -> dict[str, float]:
    """Geometry of a table (rows = items): mean/sd of row norms, mean cosine of distinct
    rows, the share of squared norm along the mean row, and the participation ratio
    (effective number of dimensions) of the centred rows' covariance."""
    x = torch.as_tensor(np.asarray(e), dtype=torch.float64)[:max_rows]
    norms = x.norm(dim=1)
    u = x / norms[:, None].clamp_min(1e-12)
    c = u @ u.T
    n = x.shape[0]
    off = (c.sum() - c.diagonal().sum()) / max(n * (n - 1), 1)
    mean = x.mean(0)
    ev = torch.linalg.eigvalsh(torch.cov((x - mean).T))
    return {
        "norm_mean": float(norms.mean()),
        "norm_sd": float(norms.std()) if n > 1 else 0.0,
        "mean_cosine": float(off),
        "mean_share": float(mean.square().sum() / x.square().sum(1).mean()),
        "participation_ratio": float(ev.sum() ** 2 / ev.square().sum()),
    }


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


def read_wte(path: str | Path) -> np.ndarray:
    """GPT-2's token-embedding matrix (vocab, d_model) float32 from a ``.safetensors`` file.

    Uses the ``safetensors`` package when installed; otherwise reads the format
    directly (an 8-byte little-endian header length, a JSON header of
    ``name -> {dtype, shape, data_offsets}``, then the raw bytes).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint not found: {path}")
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


class BytePairEncoder:
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
        for k, chunk in enumerate(text.split(EOS_TOKEN)):
            if k:
                ids.append(self.vocab[EOS_TOKEN])
            for word in self._split.findall(chunk):
                if word not in self._cache:
                    self._cache[word] = self._merge("".join(self.alphabet[b] for b in word.encode("utf-8")))
                ids.extend(self._cache[word])
        return ids


@dataclass(frozen=True)
class Tokenizer:
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


def load_tokenizer(directory: str | Path) -> Tokenizer:
    """GPT-2's tokenizer from ``tokenizer.json`` or ``vocab.json`` + ``merges.txt`` in ``directory``.

    With the ``tokenizers`` package installed it does the work; otherwise
    :class:`BytePairEncoder` reads the same files.
    """
    d = Path(directory)
    tj, vj, mt = d / "tokenizer.json", d / "vocab.json", d / "merges.txt"
    if not (tj.is_file() or (vj.is_file() and mt.is_file())):
        raise FileNotFoundError(f"no tokenizer in {d}: need tokenizer.json, or vocab.json and merges.txt")
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
            tok.add_special_tokens([EOS_TOKEN])
            impl = f"tokenizers {tokenizers.__version__} (vocab.json + merges.txt)"
        eos = tok.token_to_id(EOS_TOKEN)
        if eos is None:
            raise ValueError(f"tokenizer in {d} has no {EOS_TOKEN} token")
        return Tokenizer(
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
    if EOS_TOKEN not in vocab:
        raise ValueError(f"tokenizer in {d} has no {EOS_TOKEN} token")
    bpe = BytePairEncoder(vocab, merges)
    inverse = {i: s for s, i in vocab.items()}
    unbyte = {c: b for b, c in bpe.alphabet.items()}

    def decode_token(i: int) -> str:
        s = inverse[i]
        if s == EOS_TOKEN:
            return s
        return bytes(unbyte[c] for c in s).decode("utf-8", errors="replace")

    return Tokenizer(
        encode_batch=lambda lines: [bpe.encode(t) for t in lines],
        eos_id=int(vocab[EOS_TOKEN]),
        vocab_size=max(vocab.values()) + 1,
        impl=bpe.impl,
        decode_token=decode_token,
    )


# ----------------------------------------------------------------------------- counting


def count_tokens(
    lines: Iterable[str], tok: Tokenizer, n_tokens: int = N_TOKENS, chunk: int = 1000
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


# ----------------------------------------------------------------------------- building, saving, loading


def _local_dir(local_dir: str | Path | None) -> Path | None:
    d = local_dir if local_dir is not None else os.environ.get("RGR_GPT2_DIR")
    return Path(d) if d else None


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
    revision: str | None = None,
) -> ItemTable:
    """Build the real table: count tokens, pick the m most frequent, read their ``wte`` rows.

    ``local_dir`` (or ``RGR_GPT2_DIR``) points at a local copy in the hub's file
    layout (see the module docstring); ``text`` overrides its text file. With
    ``hub=True`` and no local copy, the checkpoint and tokenizer come from
    ``openai-community/gpt2`` through ``huggingface_hub``'s cache and WikiText-103
    through ``datasets`` (streamed; only the first ``n_tokens`` tokens are read).
    """
    d = _local_dir(local_dir)
    if d is not None:
        if not d.is_dir():
            raise FileNotFoundError(f"local GPT-2 directory not found: {d} (argument local_dir or RGR_GPT2_DIR)")
        ckpt = d / "model.safetensors"
        tok = load_tokenizer(d)
        if text is None:
            found = [d / n for n in TEXT_FILES if (d / n).is_file()]
            if not found:
                raise FileNotFoundError(f"no text to count in {d}: expected one of {TEXT_FILES} (or pass text=)")
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

        ckpt = Path(hf_hub_download(HUB_REPO, "model.safetensors", revision=revision))
        tok_path = Path(hf_hub_download(HUB_REPO, "tokenizer.json", revision=revision))
        tok = load_tokenizer(tok_path.parent)
        import datasets

        name, config, split = WIKITEXT
        rows = datasets.load_dataset(name, config, split=split, streaming=True)
        lines = (r["text"] for r in rows)
        prov = {
            "source": f"GPT-2 small ({HUB_REPO})",
            "checkpoint": f"{HUB_REPO}/model.safetensors",
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


def items_available(path: str | Path | None = None, local_dir: str | Path | None = None) -> bool:
    """True when a real GPT-2 table can be had without network (saved table or local copy)."""
    p = Path(path) if path is not None else default_path()
    d = _local_dir(local_dir)
    return p.is_file() or (d is not None and (d / "model.safetensors").is_file())


def load_items(
    m: int | None = None,
    path: str | Path | None = None,
    local_dir: str | Path | None = None,
    allow_stand_in: bool = False,
    stand_in: StandInSpec = StandInSpec(),
) -> ItemTable:
    """The E7 item table, without network: the saved table, else a local copy, else a stand-in.

    ``m`` takes the m most frequent items (default: all in the table; 6144 for a
    stand-in). A stand-in is returned only with ``allow_stand_in=True`` and then
    with a warning; otherwise the absence of GPT-2 is an error that says how to
    get it.
    """
    p = Path(path) if path is not None else default_path()
    if p.is_file():
        table = _read_npz(p)
    elif _local_dir(local_dir) is not None:
        table = build_items(m=m or 6144, local_dir=local_dir)
    elif allow_stand_in:
        warnings.warn(
            "GPT-2 embeddings not available (no data/gpt2_items.npz, no RGR_GPT2_DIR): using a seeded STAND-IN, "
            "not GPT-2. Run `python -m rgr gpt2 build` with hub access (or RGR_GPT2_DIR) to use GPT-2.",
            stacklevel=2,
        )
        return stand_in_items(m or 6144, stand_in)
    else:
        raise FileNotFoundError(
            f"no GPT-2 item table at {p} and RGR_GPT2_DIR is not set. Build it with `python -m rgr gpt2 build --hub` "
            "(needs the Hugging Face hub) or `python -m rgr gpt2 build --dir DIR` (a local copy), "
            "or pass allow_stand_in=True to run on clearly labelled stand-in vectors"
        )
    return table.head(m) if m is not None else table


# ----------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    """``python -m rgr gpt2 build [--m M] [--dir DIR | --hub] [--out PATH] [--n-tokens N]``."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m rgr gpt2", description="Build data/gpt2_items.npz (protocol E7)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="count WikiText-103 tokens and save GPT-2's embeddings of the top m")
    b.add_argument("--m", type=int, default=6144)
    b.add_argument("--dir", default=None, help="local copy (else RGR_GPT2_DIR)")
    b.add_argument("--hub", action="store_true", help="download from the Hugging Face hub")
    b.add_argument("--text", default=None, help="text file to count (local copy only)")
    b.add_argument("--n-tokens", type=int, default=N_TOKENS)
    b.add_argument("--out", default=None, help="output .npz (default data/gpt2_items.npz)")
    b.add_argument("--dtype", default="float16", choices=["float16", "float32"])
    args = ap.parse_args(argv)
    table = build_items(m=args.m, local_dir=args.dir, hub=args.hub, n_tokens=args.n_tokens, text=args.text)
    out = save_items(table, args.out, dtype=args.dtype)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB): m={table.m}, d_model={table.d_model}, "
          f"source={table.source}, top tokens {list(table.tokens[:10])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
