# rgr: install cell (inserted by `python3 tasks.py tag`; edit book/_install_cell.py, not the copies)
# Outside a checkout (Colab, Binder, a downloaded notebook): get rgr and data/, run from book/. In a checkout: nothing.
try:
    import rgr  # noqa: F401
except ImportError:
    import os, subprocess, sys  # noqa: E401
    REPO = "{repository_url}"  # _config.yml, repository.url
    if not REPO:
        raise ImportError("this chapter needs the package rgr and data/: download the source bundle {bundle} (the book "
                          "site's download menu, or its first page), unzip it, run `pip install -e .` in its folder and "
                          "open this notebook from its book/ folder (or clone the book's repository)") from None
    subprocess.run(["git", "clone", "--depth", "1", REPO, "rgr-book"], check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-e", "rgr-book"], check=True)
    sys.path.insert(0, os.path.abspath("rgr-book"))
    os.chdir("rgr-book/book")
