from clusterforge.cli.launch import main

main()
