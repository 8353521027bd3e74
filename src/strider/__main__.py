"""``python -m strider``: the same as the ``strider`` command."""

import sys

from strider.cli.main import main

sys.exit(main())
