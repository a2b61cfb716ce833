import FobStore
import FobTestSupport
import FobTokens
import FobViewModels
import Foundation
import Testing

/// Find by typing, the live preview and the message history (issue 20).
@Suite struct FindByTypingTests {
    private func github() -> Item {
        var github = item("GitHub", "ana@example.com", label: "Work account")
        github.url = "https://github.com/login"
        return github
    }

    /// Issue 20: `github ana` and `ghub` found nothing (a substring of one field).
    @Test func termsAcrossFieldsAndSubsequencesFindTheItem() throws {
        let h = try Harness.unlocked(items: [item("gitlab.com", "bob"), github(), item("slack.com", "ana")])
        h.send(.startFilter, .insert("github ana"))
        #expect(h.list.rows.map(\.service) == ["GitHub"])
        #expect(h.list.selectedRow?.service == "GitHub")
        h.send(.clearField, .insert("ghub"))
        #expect(h.list.rows.map(\.service) == ["GitHub"])
        // The label, the URL and the kind are searched too.
        h.send(.clearField, .insert("work"))
        #expect(h.list.rows.map(\.service) == ["GitHub"])
        h.send(.clearField, .insert("login"))
        #expect(h.list.rows.map(\.service) == ["GitHub"])
        h.send(.clearField, .insert("GIT   BOB"))
        #expect(h.list.rows.map(\.service) == ["gitlab.com"])
    }

    @Test func prefixBeatsWordStartBeatsSubsequence() throws {
        let h = try Harness.unlocked(items: [
            item("mylabel", "x"), item("docs.lab.example", "y"), item("lab", "z"), item("l-a-b", "w"),
        ])
        h.send(.startFilter, .insert("lab"))
        #expect(h.list.rows.map(\.service) == ["lab", "docs.lab.example", "mylabel", "l-a-b"])
        #expect(h.list.selectedRow?.service == "lab")
    }

    /// Characters are literal (no pattern syntax); accents and case fold as the list's order does.
    @Test func literalCharactersFoldedCaseAndAccents() throws {
        let h = try Harness.unlocked(items: [item("Café.example", "José"), item("cafe-x", "y"), item("a*b", "z")])
        h.send(.startFilter, .insert("CAFE."))
        #expect(h.list.rows.map(\.service) == ["Café.example"])
        h.send(.clearField, .insert("jose"))
        #expect(h.list.rows.map(\.service) == ["Café.example"])
        h.send(.clearField, .insert("*"))
        #expect(h.list.rows.map(\.service) == ["a*b"])
        h.send(.clearField, .insert("a.*"))
        #expect(h.list.rows.isEmpty)
    }

    /// A keystroke that narrows the search looks only at the last matches;
    /// one that widens it (Backspace, an edit) looks at every item again.
    @Test func narrowingAndWideningGiveTheSameAsAFreshSearch() throws {
        let items = [
            item("github.com", "ana"), item("gitlab.com", "bob"), item("gist.example", "cy"), item("mail", "git"),
            item("other", "x"),
        ]
        let h = try Harness.unlocked(items: items)
        h.send(.startFilter)
        let steps: [Action] = [
            .insert("g"), .insert("i"), .insert("t"), .insert("h"), .deleteBackward, .insert("l"), .insert(" "),
            .insert("b"), .deleteBackward, .deleteBackward, .deleteBackward, .insert("s"), .moveCursor(.home),
            .insert("a"),
        ]
        for step in steps {
            h.send(step)
            let fresh = try Harness.unlocked(items: items)
            fresh.send(.startFilter, .insert(h.list.filter.text))
            #expect(h.list.rows.map(\.service) == fresh.list.rows.map(\.service), "\(h.list.filter.text)")
            #expect(h.list.selectedIndex == fresh.list.selectedIndex)
        }
        #expect(ListSearch.narrows(ListSearch.terms("gi"), to: ListSearch.terms("git b")))
        #expect(!ListSearch.narrows(ListSearch.terms("gith"), to: ListSearch.terms("git")))
    }

    @Test func rankIsNilWhenOneTermMisses() {
        let key = ListSearch.key(service: "GitHub", account: "ana", label: "", url: "", kind: "password")
        #expect(ListSearch.rank(key, terms: ListSearch.terms("git ana")) == 0)
        #expect(ListSearch.rank(key, terms: ListSearch.terms("git zed")) == nil)
        // A term does not match across two fields.
        #expect(ListSearch.rank(key, terms: ListSearch.terms("huban")) == nil)
        #expect(ListSearch.terms("  a  b ") == [Array("a".utf8), Array("b".utf8)])
    }
}

@Suite struct PreviewTests {
    private func texts(_ h: Harness) -> [String: String] {
        var out: [String: String] = [:]
        for line in h.main.preview?.lines(at: h.clock.now) ?? [] { out[line.label] = line.text }
        return out
    }

    /// The preview follows the selection with no key, the secret masked at a fixed width.
    @Test func followsTheSelectionWithAFixedWidthMask() throws {
        var bank = item("bank", "ana", "a-very-long-secret-of-40-characters-abcd", label: "Savings")
        bank.url = "https://bank.example"
        bank.notes = "line one\nline two"
        bank.customFields = [
            CustomField(name: "pin", text: "4321", isHidden: true), CustomField(name: "branch", text: "north"),
        ]
        let h = try Harness.unlocked(items: [item("aaa", "bo", "x"), bank])
        #expect(texts(h)["Service"] == "aaa")
        #expect(texts(h)["Password"] == ItemPreview.mask)
        h.send(.moveSelection(1))
        let shown = texts(h)
        #expect(shown["Service"] == "bank")
        #expect(shown["User ID"] == "ana")
        #expect(shown["Label"] == "Savings")
        #expect(shown["URL"] == "https://bank.example")
        #expect(shown["Notes"] == "line one\nline two")
        #expect(shown["Password"] == "••••••••")
        #expect(shown["pin"] == "••••••••")
        #expect(shown["branch"] == "north")
        #expect(shown["Modified"] != nil)
        #expect(h.main.preview?.lines(at: h.clock.now).allSatisfy { !$0.text.contains("secret-of") } == true)
    }

    /// Ctrl-R on the list reveals the preview's secret and hidden fields;
    /// moving to another item hides them again.
    @Test func ctrlRRevealsAndMovingHides() throws {
        var bank = item("bank", "ana", "hunter2")
        bank.customFields = [CustomField(name: "pin", text: "4321", isHidden: true)]
        let h = try Harness.unlocked(items: [bank, item("mail", "bo", "pw2")])
        h.send(.toggleReveal)
        #expect(texts(h)["Password"] == "hunter2")
        #expect(texts(h)["pin"] == "4321")
        #expect(h.form.retrievedPassword == nil, "the form holds nothing")
        h.send(.toggleReveal)
        #expect(texts(h)["Password"] == ItemPreview.mask)
        h.send(.toggleReveal, .moveSelection(1))
        #expect(texts(h)["Service"] == "mail")
        #expect(texts(h)["Password"] == ItemPreview.mask)
        #expect(h.main.preview?.revealed == false)
    }

    /// The one-time code shows in clear with its seconds left, and moves on with the clock.
    @Test func oneTimeCodeInClearWithSecondsLeft() throws {
        var bank = item("bank", "ana")
        bank.oneTimePassword = SecretBytes(utf8: "otpauth://totp/Bank:ana?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        let h = try Harness.unlocked(items: [bank])
        // 2026-01-01 00:00:00 UTC is a multiple of 30 s: 30 s left.
        let first = try #require(texts(h)["2FA code"])
        #expect(first.hasSuffix(" · 30 s left"))
        #expect(first.prefix(6).allSatisfy { $0.isNumber })
        h.clock.advance(by: 12)
        h.app.tick()
        #expect(texts(h)["2FA code"] == "\(first.prefix(6)) · 18 s left")
        h.clock.advance(by: 18)
        h.app.tick()
        let next = try #require(texts(h)["2FA code"])
        #expect(next.hasSuffix(" · 30 s left"))
        #expect(next.prefix(6) != first.prefix(6))
    }

    /// A token's claims and its expiry as local time and relative; within
    /// five minutes it is marked soon, past it expired.
    @Test func tokenClaimsAndExpiry() throws {
        let now = 1_767_225_600.0
        let h = try Harness.unlocked(items: [item("api", "deploy", jwt(exp: now + 52 * 60), kind: .token)])
        var line = try #require(h.main.preview?.lines(at: h.clock.now).first { $0.label == "Expires" })
        let local = ItemPreview.localTime(Date(timeIntervalSince1970: now + 52 * 60), now: h.clock.now)
        #expect(line.text == "\(local) · in 52m")
        #expect(line.style == .plain)
        #expect(texts(h)["Subject"] == "ana")
        h.clock.advance(by: 48 * 60)
        line = try #require(h.main.preview?.lines(at: h.clock.now).first { $0.label == "Expires" })
        #expect(line.text == "\(local) · in 4m")
        #expect(line.style == .soon)
        h.clock.advance(by: 5 * 60)
        line = try #require(h.main.preview?.lines(at: h.clock.now).first { $0.label == "Expires" })
        #expect(line.text == "\(local) · 1m ago")
        #expect(line.style == .expired)
    }

    /// An OAuth item's expiry offered "(r refreshes)", a key that types
    /// into the query since the key map moved: it names F5, the key bound.
    @Test func anOAuthExpiryNamesTheRefreshKeyBound() throws {
        let set = OAuthTokenSet(
            accessToken: "opaque", refreshToken: "rt", idToken: nil,
            expiresAt: Date(timeIntervalSince1970: 1_767_225_600 + 52 * 60),
            tokenEndpoint: URL(string: "https://id.example/token")!, clientID: "c")
        var oauth = item("idp", "ana", kind: .oauth)
        oauth.secret = SecretBytes(set.encoded())
        let h = try Harness.unlocked(items: [oauth])
        let line = try #require(h.main.preview?.lines(at: h.clock.now).first { $0.label == "Expires" })
        #expect(line.text.hasSuffix(" · in 52m  (F5 refreshes)"), "\(line.text)")
        h.send(.editSelected)
        let row = h.form.detailRows(at: h.app.now).first { $0.label == "Expires" }
        #expect(row?.text == "expires in 52m  (F5 refreshes)")
    }

    @Test func previewFollowsAChangeMadeElsewhere() throws {
        let h = try Harness.unlocked(items: [item("bank", "ana", label: "old")])
        #expect(texts(h)["Label"] == "old")
        h.store.externalPut(item("bank", "ana", label: "new", modified: Date(timeIntervalSince1970: 1_767_100_000)))
        h.clock.advance(by: 1)
        h.app.tick()
        #expect(texts(h)["Label"] == "new")
    }

    /// A write elsewhere that keeps the modification date (two writes in
    /// one clock tick) still reaches the preview: its revision moved on.
    @Test func previewFollowsAChangeWithTheSameDate() throws {
        let h = try Harness.unlocked(items: [item("bank", "ana", label: "old")])
        #expect(texts(h)["Label"] == "old")
        h.store.externalPut(item("bank", "ana", label: "new"))
        h.clock.advance(by: 1)
        h.app.tick()
        #expect(texts(h)["Label"] == "new")
    }

    @Test func lockDropsThePreview() throws {
        let h = try Harness.unlocked(items: [item("bank", "ana", "hunter2")])
        h.send(.toggleReveal)
        let main = h.main
        h.send(.lock)
        #expect(main.preview == nil)
    }
}

@Suite struct StatusMessageTests {
    /// The status line says what happened to which item.
    @Test func copyNamesWhatAndWhich() throws {
        let h = try Harness.unlocked(items: [item("slack.com", "ana", "pw")])
        h.send(.copySelected)
        #expect(h.message == "Copied password of slack.com / ana · clears in 45 s")
        h.send(.copyUserID)
        #expect(h.message == "Copied user ID of slack.com / ana · clears in 45 s")
    }

    /// `m` shows the last 20 messages, oldest dropped; any key closes it.
    @Test func historyKeepsTheLastTwenty() throws {
        let h = try Harness.unlocked(items: [item("slack.com", "ana", "pw")])
        for _ in 0..<15 { h.send(.copySelected) }
        let log = h.main.messages.entries
        #expect(log.count == MessageLog.capacity)
        #expect(log.last?.line == .success("Copied password of slack.com / ana · clears in 45 s"))
        #expect(log.last?.time == h.clock.now)
        h.send(.showMessages)
        #expect(h.app.overlay == .messages)
        h.send(.quit)
        #expect(h.app.overlay == nil)
        #expect(!h.app.shouldQuit)
    }
}
