import Testing

@Test func FobSecurityPlaceholder() {}
