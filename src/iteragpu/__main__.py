from iteragpu.cli import main

main()
