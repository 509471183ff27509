from tools.cli.main import main

main()
