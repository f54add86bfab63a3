from investigator.launcher import main

main()
