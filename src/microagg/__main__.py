"""``python -m microagg``: the command line (:func:`microagg.cli.entry`)."""

if __name__ == "__main__":
    from microagg.cli import entry

    entry()
