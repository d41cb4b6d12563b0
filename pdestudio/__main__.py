"""`python -m pdestudio ...` is the `pdestudio` command."""
from pdestudio.app.cli import main

raise SystemExit(main())
