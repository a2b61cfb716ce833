import FobStore
import Testing

/// ListingOrder's fold by its generated table gives what Foundation's
/// case- and diacritic-insensitive folding gave (the expected texts are
/// that folding's output).
@Suite struct ListingOrderTests {
    @Test(arguments: [
        ("Caf\u{e9}", "cafe"),
        ("\u{c9}COLE", "ecole"),
        ("\u{c4}rger", "arger"),
        ("Stra\u{df}e", "strasse"),
        ("na\u{ef}ve", "naive"),
        ("e\u{301}t\u{301}e\u{301}", "ete"),
        ("\u{301}a", "\u{301}a"),
        ("\u{1c4}emal", "\u{1c6}emal"),
        ("\u{fb01}ne", "fine"),
        ("\u{3a9}\u{3bc}\u{3ad}\u{3b3}\u{3b1}", "\u{3c9}\u{3bc}\u{3b5}\u{3b3}\u{3b1}"),
        ("\u{65e5}\u{672c}", "\u{65e5}\u{672c}"),
        ("Cr\u{e8}me Br\u{fb}l\u{e9}e", "creme brulee"),
        ("\u{d8}re", "\u{f8}re"),
        ("\u{141}\u{d3}D\u{179}", "\u{142}odz"),
        ("Bank", "bank"),
    ])
    func foldsAsFoundationDid(text: String, folded: String) {
        #expect(Array(ListingOrder.fold(text).unicodeScalars) == Array(folded.unicodeScalars))
    }

    @Test func accentsAndCaseSortTogether() {
        let names = ["cafe", "Caf\u{e9}", "Bank", "bank", "\u{c9}cole"]
        let sorted = ListingOrder.sorted(names) { (service: $0, account: "", accessGroup: "") }
        #expect(sorted == ["Bank", "bank", "Caf\u{e9}", "cafe", "\u{c9}cole"])
    }
}
