from skenario.cli import main

main()
