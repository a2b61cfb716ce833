import Testing

@Test func FobTokensPlaceholder() {}
