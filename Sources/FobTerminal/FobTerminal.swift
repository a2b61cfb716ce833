// The FobTerminal module; see README.md for its role.
