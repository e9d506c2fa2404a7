"""python3 -m dapprof_client ... (with client/ on sys.path)."""
import sys

from dapprof_client.cli import main

sys.exit(main())
