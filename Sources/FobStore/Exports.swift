// SecretBytes, Sodium and the wipes live in FobSystem (below FobClipboard,
// which needs them and nothing else of the store); every importer of FobStore
// keeps seeing them as before.
@_exported import FobSystem
