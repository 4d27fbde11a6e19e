import sys

from visibility_assets.cli.main import main

sys.exit(main())
