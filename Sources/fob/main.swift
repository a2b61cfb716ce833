import FobCLI

FobCLI.main()
