import sys

from hive_mind.cli import main

sys.exit(main())
