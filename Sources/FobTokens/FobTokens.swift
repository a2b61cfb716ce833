// The FobTokens module; see README.md for its role.
