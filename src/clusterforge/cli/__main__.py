from clusterforge.cli.app import main

main()
