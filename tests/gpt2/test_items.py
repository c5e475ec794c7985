"""The E7 item loader on a tiny fixture in GPT-2's file layout, and the labelled stand-in."""

import json
import struct
import sys

import numpy as np
import pytest
import torch

from rgr.gpt2 import experiment
from rgr.gpt2.experiment import STAND_IN_SOURCE
from rgr.gpt2.items import build_items, load_items, save_items
from rgr.gpt2.sources import count_tokens, items_from_counts, load_tokenizer, read_wte
from rgr.gpt2.table import StandInSpec, stand_in_items

D = 8
# A byte-level BPE vocabulary: the 256 byte characters (ids = byte values), six merges, then EOS.
MERGES = [("h", "e"), ("Ġ", "t"), ("Ġt", "he"), ("a", "t"), ("Ġ", "c"), ("Ġc", "at")]
TEXT = " the cat the\n the cat\n the\n"  # tokens: Ġthe Ġcat Ġthe Ċ Ġthe Ġcat Ċ Ġthe Ċ
THE, CAT, NEWLINE = 258, 261, 10
EOS = "<|endoftext|>"  # GPT-2's end-of-text token


def byte_alphabet() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character map, as its encoder.py builds it (bytes_to_unicode)."""
    bs = [*range(ord("!"), ord("~") + 1), *range(ord("\xa1"), ord("\xac") + 1), *range(ord("\xae"), 256)]
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:  # the others: 256, 257, ... in byte order
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def save_tokenizer_json(src, dst):
    """The fixture's vocab.json + merges.txt saved as one tokenizer.json in ``dst`` (the hub's layout)."""
    import tokenizers

    tok = tokenizers.ByteLevelBPETokenizer(str(src / "vocab.json"), str(src / "merges.txt"))
    tok.add_special_tokens([EOS])
    tok.save(str(dst / "tokenizer.json"))


def _write_safetensors(path, tensors):
    """The safetensors layout, written by hand: header length, JSON header, raw little-endian bytes."""
    header, blobs, offset = {}, [], 0
    for name, arr in tensors.items():
        b = np.ascontiguousarray(arr, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape), "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(h)) + h + b"".join(blobs))


@pytest.fixture()
def gpt2_dir(tmp_path):
    alphabet = byte_alphabet()
    vocab = {alphabet[b]: b for b in range(256)}
    for a, b in MERGES:
        vocab[a + b] = len(vocab)
    vocab[EOS] = len(vocab)  # 262
    (tmp_path / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (tmp_path / "merges.txt").write_text("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in MERGES), encoding="utf-8")
    wte = np.arange(len(vocab))[:, None] + 0.01 * np.arange(D)[None, :]  # row i starts with i
    _write_safetensors(tmp_path / "model.safetensors", {"wte.weight": wte, "wpe.weight": np.zeros((4, D))})
    (tmp_path / "text.txt").write_text(TEXT, encoding="utf-8")
    return tmp_path


def test_read_wte(gpt2_dir):
    w = read_wte(gpt2_dir / "model.safetensors")
    assert w.shape == (263, D) and w.dtype == np.float32
    assert np.allclose(w[:, 0], np.arange(263)) and np.allclose(w[5, 1], 5.01)


def test_a_missing_package_names_the_extra(gpt2_dir, monkeypatch):
    monkeypatch.setitem(sys.modules, "safetensors", None)
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    with pytest.raises(ImportError, match=r"'safetensors'.*pip install -e \.\[gpt2\]"):
        read_wte(gpt2_dir / "model.safetensors")
    with pytest.raises(ImportError, match=r"'tokenizers'.*pip install -e \.\[gpt2\]"):
        load_tokenizer(gpt2_dir)


def test_the_build_command_names_the_missing_extra_in_one_line(gpt2_dir, monkeypatch, capsys):
    from rgr.cli import main as cli

    monkeypatch.setitem(sys.modules, "safetensors", None)
    code = cli(["gpt2", "build", "--m", "8", "--dir", str(gpt2_dir), "--text", str(gpt2_dir / "text.txt"),
                "--n-tokens", "50", "--out", str(gpt2_dir / "out.npz")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "pip install -e .[gpt2]" in err, err
    assert not (gpt2_dir / "out.npz").exists()


def test_tokenizer_on_fixture(gpt2_dir):
    tok = load_tokenizer(gpt2_dir)
    assert tok.impl.startswith("tokenizers") and tok.eos_id == 262
    assert tok.encode_batch([" the cat the\n"]) == [[THE, CAT, THE, NEWLINE]]
    assert tok.encode_batch(["x<|endoftext|>"]) == [[ord("x"), 262]]
    assert tok.decode_token(THE) == " the" and tok.decode_token(NEWLINE) == "\n"


def test_count_and_select(gpt2_dir):
    tok = load_tokenizer(gpt2_dir)
    counts, seen = count_tokens(TEXT.splitlines(keepends=True), tok, n_tokens=100, chunk=2)
    assert seen == 9 and counts[THE] == 4 and counts[CAT] == 2 and counts[NEWLINE] == 3
    counts4, seen4 = count_tokens(TEXT.splitlines(keepends=True), tok, n_tokens=4)
    assert seen4 == 4 and (counts4[THE], counts4[CAT], counts4[NEWLINE]) == (2, 1, 1)
    # most frequent first, ties by id, EOS never an item even when it is the most frequent
    c = np.array([0, 5, 2, 5, 9])
    assert items_from_counts(c, 3, eos_id=4).tolist() == [1, 3, 2]
    with pytest.raises(ValueError, match="distinct tokens"):
        items_from_counts(c, 4, eos_id=4)


@pytest.mark.filterwarnings("ignore:the text ran out")
def test_build_save_load_from_local_dir(gpt2_dir, tmp_path, monkeypatch):
    t = build_items(m=3, local_dir=gpt2_dir)
    assert t.token_ids.tolist() == [THE, NEWLINE, CAT] and t.counts.tolist() == [4, 3, 2]
    assert t.tokens.tolist() == [" the", "\n", " cat"]
    assert np.allclose(t.embeddings[:, 0], t.token_ids) and np.allclose(t.null[0], 262)
    assert not t.is_stand_in and t.provenance["source"] == "GPT-2 small (local copy)"
    assert t.provenance["eos_excluded"] and t.provenance["n_tokens_counted"] == 9
    E = t.table()
    assert E.shape == (4, D) and torch.allclose(E[-1], torch.as_tensor(t.null))
    out = save_items(t, tmp_path / "out" / "items.npz")
    side = json.loads(out.with_suffix(".json").read_text())
    assert side["source"] == t.source and side["stored_dtype"] == "float16" and "npz_sha256" in side
    back = load_items(path=out)
    assert back.token_ids.tolist() == t.token_ids.tolist() and back.source == t.source
    assert np.allclose(back.embeddings, t.embeddings, rtol=1e-3) and back.head(2).m == 2
    # the environment variable names a local copy when nothing is saved
    monkeypatch.setenv("RGR_GPT2_DIR", str(gpt2_dir))
    env = load_items(m=2, path=tmp_path / "nothing.npz")
    assert env.token_ids.tolist() == [THE, NEWLINE]


@pytest.mark.filterwarnings("ignore:the text ran out")
def test_tokenizer_json_gives_the_same_table(gpt2_dir):
    save_tokenizer_json(gpt2_dir, gpt2_dir)
    t = build_items(m=3, local_dir=gpt2_dir)
    assert t.token_ids.tolist() == [THE, NEWLINE, CAT] and "tokenizer.json" in t.provenance["tokenizer"]


def test_missing_sources_fail_loudly(tmp_path, monkeypatch):
    monkeypatch.delenv("RGR_GPT2_DIR", raising=False)
    with pytest.raises(FileNotFoundError, match="stand-in"):
        load_items(path=tmp_path / "none.npz")
    with pytest.raises(FileNotFoundError, match="local GPT-2 directory"):
        build_items(local_dir=tmp_path / "absent")
    with pytest.raises(FileNotFoundError, match="tokenizer"):
        load_tokenizer(tmp_path)


def test_stand_in_is_labelled_and_seeded():
    t = stand_in_items(300)
    assert t.is_stand_in and t.source == STAND_IN_SOURCE == "stand-in (not GPT-2)"
    assert t.m == 300 and t.d_model == 768 and "NOT GPT-2" in t.provenance["note"]
    small = stand_in_items(100)
    assert np.array_equal(small.embeddings, t.embeddings[:100]) and np.array_equal(small.null, t.null)
    assert not np.array_equal(stand_in_items(100, StandInSpec(seed=1)).embeddings, small.embeddings)
    with pytest.raises(ValueError, match="stand-in"):
        save_items(t)  # never written where the real table belongs
    assert not experiment.default_path().exists()


def test_command_line(gpt2_dir, tmp_path, capsys):
    from rgr.__main__ import main

    out = tmp_path / "cli.npz"
    assert main(["gpt2", "build", "--dir", str(gpt2_dir), "--m", "2", "--n-tokens", "9", "--out", str(out)]) == 0
    assert load_items(path=out).token_ids.tolist() == [THE, NEWLINE] and "wrote" in capsys.readouterr().out


@pytest.mark.filterwarnings("ignore:the text ran out")
def test_hub_path_wiring(gpt2_dir, tmp_path, monkeypatch):
    """The hub branch, with the hub and the datasets library replaced by local fakes."""
    import types

    snap = tmp_path / "cache" / "snapshots" / ("ab" * 20)
    snap.mkdir(parents=True)
    (snap / "model.safetensors").write_bytes((gpt2_dir / "model.safetensors").read_bytes())
    save_tokenizer_json(gpt2_dir, snap)
    asked = []
    hub = types.ModuleType("huggingface_hub")
    hub.hf_hub_download = lambda repo, name, revision=None: asked.append((repo, name)) or str(snap / name)
    ds = types.ModuleType("datasets")
    ds.__version__ = "fake"
    ds.load_dataset = lambda *a, **k: asked.append((a, k)) or [{"text": s} for s in TEXT.splitlines(keepends=True)]
    monkeypatch.setitem(sys.modules, "huggingface_hub", hub)
    monkeypatch.setitem(sys.modules, "datasets", ds)
    monkeypatch.delenv("RGR_GPT2_DIR", raising=False)
    t = build_items(m=3, hub=True)
    assert t.token_ids.tolist() == [THE, NEWLINE, CAT] and t.source == "GPT-2 small (openai-community/gpt2)"
    assert t.provenance["checkpoint_revision"] == "ab" * 20
    assert ("openai-community/gpt2", "model.safetensors") in asked
    assert (("Salesforce/wikitext", "wikitext-103-raw-v1"), {"split": "train", "streaming": True}) in asked


@pytest.mark.parametrize("damage", ["truncated checkpoint", "garbage checkpoint", "empty checkpoint",
                                    "garbage vocab", "garbage merges", "binary vocab"])
def test_a_damaged_checkpoint_or_tokenizer_is_one_line_naming_the_file(gpt2_dir, damage, capsys):
    from rgr.cli import main as cli

    ckpt, vocab, merges = gpt2_dir / "model.safetensors", gpt2_dir / "vocab.json", gpt2_dir / "merges.txt"
    if damage == "truncated checkpoint":
        ckpt.write_bytes(ckpt.read_bytes()[:40])
    elif damage == "garbage checkpoint":
        ckpt.write_bytes(b"\xff" * 64)
    elif damage == "empty checkpoint":
        ckpt.write_bytes(b"")
    elif damage == "garbage vocab":
        vocab.write_text("{not json")
    elif damage == "garbage merges":
        merges.write_text("#version: 0.2\nonly-one-token\n")
    else:
        vocab.write_bytes(b"\x00\xff\xfe" * 10)
    code = cli(["gpt2", "build", "--m", "8", "--dir", str(gpt2_dir), "--text", str(gpt2_dir / "text.txt"),
                "--n-tokens", "50", "--out", str(gpt2_dir / "out.npz")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "rgr gpt2 build: " in err and str(gpt2_dir) in err, err
    assert not (gpt2_dir / "out.npz").exists()
