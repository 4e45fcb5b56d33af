from iteragpu.cli.app import main

main()
