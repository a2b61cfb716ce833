import Testing

@Test func FobCLIPlaceholder() {}
