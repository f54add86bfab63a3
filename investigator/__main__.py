from investigator.cli import main

main()
