"""Fetch the peer tables the chapter *the law beside other capacity results* reads (book/peers.ipynb).

Dana et al., "Memorization in Attention-only Transformers" (AISTATS 2025) publish their measured accuracies
in github.com/leodana2000/Transformer_Attentional_Memory, folder ``Scaling laws/``. That repository states no
licence, so its files are not copied into this one: this script fetches them, at the pinned commit, into
data/peers/ (git-ignored there). Either from GitHub (network) or from a local clone (``--git-dir``).
The chapter does not read them: it reads data/peers_refit.csv, the statistics ``python -m rgr peers-refit``
computes from them (committed). They are needed only to regenerate that table.

    python scripts/fetch_peers.py                       # raw.githubusercontent.com, pinned commit
    python scripts/fetch_peers.py --git-dir PATH/.git   # a clone or bare mirror holding that commit
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from rgr.results.peers.refit import COMMIT, FILES, REPO, local_name  # noqa: E402  (one home for the pinned commit and files)


def _from_git(git_dir: str, path: str) -> bytes:
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"{COMMIT}:{path}"], check=True,
                          capture_output=True).stdout


def _from_github(path: str) -> bytes:
    url = f"https://raw.githubusercontent.com/{REPO}/{COMMIT}/{urllib.parse.quote(path)}"
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--git-dir", help="a local clone's git directory holding the pinned commit (no network)")
    ap.add_argument("--out", default=str(ROOT / "data" / "peers"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for path in FILES:
        data = _from_git(args.git_dir, path) if args.git_dir else _from_github(path)
        (out / local_name(path)).write_bytes(data)
        print(f"{REPO}@{COMMIT[:12]}:{path} -> {out / local_name(path)}")
    print("regenerate data/peers_refit.csv from them with: python -m rgr peers-refit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
