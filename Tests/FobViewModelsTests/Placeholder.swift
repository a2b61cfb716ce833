import Testing

@Test func FobViewModelsPlaceholder() {}
