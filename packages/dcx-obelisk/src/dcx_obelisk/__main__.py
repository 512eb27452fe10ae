from dcx_obelisk.cli import main

raise SystemExit(main())
