// The FobSecurity module; see README.md for its role.
