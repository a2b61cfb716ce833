// The FobViewModels module; see README.md for its role.
