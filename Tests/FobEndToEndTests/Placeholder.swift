import Testing

@Test func FobEndToEndPlaceholder() {}
