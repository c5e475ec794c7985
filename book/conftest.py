"""nbval settings for the chapters (``pytest --nbval``, see pyproject.toml).

nbval leaves ``image/png`` out of its comparison, since the bytes of a PNG change with the CPU's floating-point
path even where the picture does not; myst-nb's ``glue`` stores its figures under papermill's record mime
type, which nbval would compare byte for byte. They are left out the same way: a chapter's figures are
checked through the glued numbers and tables drawn from the same data, which nbval does compare.
"""

GLUED_IMAGES = ("application/papermill.record/image/png", "application/papermill.record/image/jpeg",
                "application/papermill.record/image/svg+xml")


def pytest_collection_modifyitems(session, config, items):
    for notebook in {item.parent for item in items}:
        if hasattr(notebook, "skip_compare"):  # an nbval notebook
            notebook.skip_compare = tuple(notebook.skip_compare) + GLUED_IMAGES
