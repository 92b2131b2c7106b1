from ragweb.cli import main

raise SystemExit(main())
