"""`python -m llmload.cli`: the `llmload` command, for a process that has no console script."""

import sys

from llmload.cli import main

sys.exit(main())
