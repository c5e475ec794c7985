# rgr: install cell (inserted by `python3 tasks.py tag`; edit book/_install_cell.py, not the copies)
# Outside a checkout (Colab, Binder, a downloaded notebook): fetch the book's repository, with data/,
# install its package rgr, and run from its book/ folder. In a checkout this does nothing.
try:
    import rgr  # noqa: F401
except ImportError:
    import os, subprocess, sys  # noqa: E401
    REPO = "{repository_url}"  # _config.yml, repository.url
    if not REPO:
        raise ImportError("this chapter needs the rgr package and data/: run it in a checkout of the book's repository")
    subprocess.run(["git", "clone", "--depth", "1", REPO, "rgr-book"], check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-e", "rgr-book"], check=True)
    sys.path.insert(0, os.path.abspath("rgr-book"))
    os.chdir("rgr-book/book")
