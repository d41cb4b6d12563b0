"""Entry script of the stand-alone build: the same `pdestudio` command as the wheel installs."""
import multiprocessing
import sys

from pdestudio.app.cli import main

if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys.exit(main())
