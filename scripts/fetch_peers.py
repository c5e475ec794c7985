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
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from rgr.paths import replace_whole  # noqa: E402
from rgr.results.peers.refit import COMMIT, FILES, REPO, local_name  # noqa: E402  (one home for the pinned commit, files)


class FetchError(Exception):
    """Why the peer tables could not be fetched: one line for the user."""


def _from_git(git_dir: str, path: str) -> bytes:
    try:
        return subprocess.run(["git", "--git-dir", git_dir, "show", f"{COMMIT}:{path}"], check=True,
                              capture_output=True).stdout
    except FileNotFoundError:
        raise FetchError("git is not installed; install it or fetch from GitHub (without --git-dir)") from None
    except subprocess.CalledProcessError as e:
        why = (e.stderr.decode(errors="replace").strip().splitlines() or ["git failed"])[-1]
        raise FetchError(f"--git-dir {git_dir}: does not hold {COMMIT[:12]}:{path} ({why}); "
                         f"give the git directory of a clone of {REPO} that has that commit") from None


def _from_github(path: str) -> bytes:
    url = f"https://raw.githubusercontent.com/{REPO}/{COMMIT}/{urllib.parse.quote(path)}"
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.read()
    except urllib.error.HTTPError as e:
        raise FetchError(f"{url}: HTTP {e.code} {e.reason}; use --git-dir with a clone of {REPO}") from None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise FetchError(f"cannot reach raw.githubusercontent.com ({reason}; no network?); use --git-dir with a "
                         f"clone of {REPO}") from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--git-dir", help="a local clone's git directory holding the pinned commit (no network)")
    ap.add_argument("--out", default=str(ROOT / "data" / "peers"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    try:  # every file first: nothing is written unless all of them came
        got = {path: _from_git(args.git_dir, path) if args.git_dir else _from_github(path) for path in FILES}
        out.mkdir(parents=True, exist_ok=True)
        for path, data in got.items():
            replace_whole(out / local_name(path), data)
            print(f"{REPO}@{COMMIT[:12]}:{path} -> {out / local_name(path)}")
    except FetchError as e:
        print(f"fetch_peers: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"fetch_peers: --out {out}: {e.strerror or e}", file=sys.stderr)
        return 1
    print("regenerate data/peers_refit.csv from them with: python -m rgr peers-refit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
