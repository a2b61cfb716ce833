import Testing

@Test func FobTerminalPlaceholder() {}
