import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

@Suite struct ItemListTests {
    @Test func rowsShowAttributesSortedByServiceThenAccount() throws {
        let modified = Date(timeIntervalSince1970: 1_767_225_600)
        let h = try Harness.unlocked(items: [
            item("zeta", "b"), item("Alpha", "z"), item("alpha", "a", label: "Work", modified: modified),
            item("Beta", "x", kind: .note),
        ])
        #expect(h.list.rows.map { "\($0.service)/\($0.account)" } == ["alpha/a", "Alpha/z", "Beta/x", "zeta/b"])
        let first = try #require(h.list.rows.first)
        #expect(first.label == "Work")
        #expect(first.kind == .password)
        #expect(first.modified == modified)
        #expect(first.expiryText == nil)
        #expect(h.list.rows[2].kind == .note)
        #expect(h.list.selectedIndex == 0)
    }

    @Test func longExpirySpansKeepOnlyTheLargestUnit() throws {
        let now = 1_767_225_600.0
        let h = Harness(
            items: [
                oauthItem("idp", "decade", expiresAt: now - (10 * 365 + 239) * 86_400),
                oauthItem("idp", "hours", expiresAt: now - (23 * 3600 + 59 * 60)),
                oauthItem("idp", "short", expiresAt: now - (2 * 3600 + 5 * 60)),
                oauthItem("idp", "future", expiresAt: now + (200 * 86_400 + 5 * 3600)),
            ], lockAfter: 0)
        h.unlock()
        func text(_ account: String) -> String? { h.list.rows.first { $0.account == account }?.expiryText }
        #expect(text("decade") == "expired 10y ago")
        #expect(text("hours") == "expired 23h ago")
        #expect(text("short") == "expired 2h 5m ago")
        #expect(text("future") == "expires in 200d")
        #expect(h.list.rows.allSatisfy { ($0.expiryText?.count ?? 0) <= 17 })
    }

    @Test func tokenExpiryFromJWTAndOAuth() throws {
        let h = Harness(
            items: [
                item("api", "soon", jwt(exp: 1_767_225_600 + 240), kind: .token),
                item("api", "old", jwt(exp: "\(1_767_225_600 - 7200)"), kind: .token),
                item("api", "frac", jwt(exp: 1_767_225_600.5 + 90), kind: .token),
                oauthItem("idp", "ana", expiresAt: 1_767_225_600 + 3 * 86_400),
                oauthItem("idp", "bob", expiresAt: 1_767_225_600 + 30),
                item("bad", "tok", "not a jwt", kind: .token),
            ], lockAfter: 0)
        h.unlock()
        func text(_ account: String) -> String? { h.list.rows.first { $0.account == account }?.expiryText }
        #expect(text("soon") == "expires in 4m")
        #expect(text("old") == "expired 2h ago")
        #expect(h.list.rows.first { $0.account == "old" }?.expires == Date(timeIntervalSince1970: 1_767_225_600 - 7200))
        #expect(text("frac") == "expires in 1m")
        #expect(text("ana") == "expires in 3d")
        #expect(text("bob") == "expires in 30s")
        #expect(text("tok") == nil)
        h.clock.advance(by: 300)
        h.app.tick()
        #expect(text("soon") == "expired 1m ago")
        #expect(text("ana") == "expires in 2d 23h")
    }

    @Test func filterIsCaseAndDiacriticInsensitiveOverServiceAccountLabel() throws {
        let h = try Harness.unlocked(items: [
            item("Café", "ana"), item("mail", "JOSÉ"), item("bank", "x", label: "Épargne"), item("other", "y"),
        ])
        h.send(.startFilter, .insert("cafe"))
        #expect(h.main.focus == .filter)
        #expect(h.list.rows.map(\.service) == ["Café"])
        h.send(.clearField, .insert("jose"))
        #expect(h.list.rows.map(\.service) == ["mail"])
        h.send(.clearField, .insert("EPAR"))
        #expect(h.list.rows.map(\.service) == ["bank"])
        h.send(.deleteBackward, .deleteBackward, .deleteBackward, .deleteBackward, .insert("zzz"))
        #expect(h.list.rows.isEmpty)
        #expect(h.list.selectedIndex == nil)
        h.send(.clearField, .insert("n"), .submit)
        #expect(h.main.focus == .list)
        #expect(h.list.filter.text == "n")
        // "ana" has its n one character in, "bank" two: the earlier match first.
        #expect(h.list.rows.map(\.service) == ["Café", "bank"])
        h.send(.cancel)
        #expect(h.list.filter.isEmpty)
        #expect(h.list.rows.count == 4)
        h.send(.startFilter, .insert("bank"), .cancel)
        #expect(h.list.filter.isEmpty)
        #expect(h.main.focus == .list)
    }

    /// Leading and trailing spaces in the filter are ignored; inner ones count.
    @Test func filterIgnoresLeadingAndTrailingSpaces() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana"), item("web", "bo"), item("my bank", "cy")])
        h.send(.startFilter, .insert("  mail "))
        #expect(h.list.rows.map(\.service) == ["mail"])
        h.send(.clearField, .insert("   "))
        #expect(h.list.rows.count == 3)
        h.send(.clearField, .insert(" y b "))
        #expect(h.list.rows.map(\.service) == ["my bank"])
    }

    @Test func selectionMovesAndStopsAtTheEnds() throws {
        let h = try Harness.unlocked(items: [item("a", "1"), item("b", "2"), item("c", "3")])
        h.send(.moveSelection(1), .moveSelection(1), .moveSelection(1))
        #expect(h.list.selectedRow?.service == "c")
        h.send(.moveSelection(-5))
        #expect(h.list.selectedRow?.service == "a")
    }

    /// Issue 20: the selection stayed where it was instead of moving to the
    /// match; at every keystroke it now jumps to the best match.
    @Test func selectionJumpsToTheBestMatchAtEveryKeystroke() throws {
        let h = try Harness.unlocked(items: [item("alpha", "1"), item("beta", "2"), item("gamma", "3")])
        h.send(.moveSelection(1))
        h.send(.startFilter, .insert("g"))
        #expect(h.list.selectedRow?.service == "gamma")
        h.send(.moveSelection(-1), .insert("a"))
        #expect(h.list.selectedRow?.service == "gamma")
        h.send(.clearField, .insert("b"))
        #expect(h.list.selectedRow?.service == "beta")
        // Esc clears the filter and keeps the item selected.
        h.send(.cancel)
        #expect(h.list.rows.count == 3)
        #expect(h.list.selectedRow?.service == "beta")
    }

    @Test func ctrlEPutsSelectedItemInTheForm() throws {
        let h = try Harness.unlocked(items: [item("a", "1"), item("mail", "ana", "pw")])
        h.send(.moveSelection(1), .editSelected)
        #expect(h.form.service.text == "mail")
        #expect(h.form.userID.text == "ana")
        #expect(h.form.retrievedID == "ana")
        #expect(h.form.retrievedPassword == SecretBytes(utf8: "pw"))
        // Issue 20: on Service, not Password, where a habitual `c` would type into the secret.
        #expect(h.main.focus == .service)
    }

    @Test func commandsOnAnEmptyListSayNoItemSelected() throws {
        let h = try Harness.unlocked()
        for action in [Action.openSelected, .copySelected, .deleteSelected] {
            h.send(.newItem, action)
            #expect(h.message == "No item selected")
        }
        #expect(h.app.overlay == nil)
    }

    @Test func anotherProcessesChangesAppearWithinASecondKeepingSelectionAndFilter() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana"), item("mail", "bob"), item("web", "x")])
        h.send(.startFilter, .insert("mail"), .submit, .moveSelection(1))
        #expect(h.list.selectedRow?.account == "bob")
        h.store.externalPut(item("mail", "aaron"))
        h.store.externalPut(item("news", "z"))
        h.clock.advance(by: 1)
        h.app.tick()
        #expect(h.list.rows.map(\.account) == ["aaron", "ana", "bob"])
        #expect(h.list.selectedRow?.account == "bob")
        #expect(h.list.filter.text == "mail")
        #expect(h.list.allRows.count == 5)
    }

    @Test func selectedItemRemovedElsewhereSelectsANeighbour() throws {
        let h = try Harness.unlocked(items: [item("a", "1"), item("b", "2"), item("c", "3")])
        h.send(.moveSelection(2))
        h.store.externalRemove(ItemKey(service: "c", account: "3"))
        h.clock.advance(by: 1)
        h.app.tick()
        #expect(h.list.selectedRow?.service == "b")
    }

    @Test func ticksDoNotReloadWithoutAChange() throws {
        let h = try Harness.unlocked(items: [item("a", "1")])
        let loads = h.store.calls["allItems"] ?? 0
        for _ in 0..<5 {
            h.clock.advance(by: 1)
            h.app.tick()
        }
        #expect(h.store.calls["allItems"] == loads)
    }

    @Test func helpOverlayOpensAndAnyKeyCloses() throws {
        let h = try Harness.unlocked()
        h.send(.showHelp)
        #expect(h.app.overlay == .help)
        // A help in pages turns them (the key map sends these only then).
        h.send(.moveSelection(1))
        #expect(h.app.overlay == .help && h.app.helpPage == 1)
        h.send(.moveSelection(-1))
        #expect(h.app.helpPage == 0)
        h.send(.dismiss)
        #expect(h.app.overlay == nil)
        // Issue 20: q and Esc close the help; they never quit Fob.
        h.send(.showHelp, .quit)
        #expect(h.app.overlay == nil)
        #expect(!h.app.shouldQuit)
        h.send(.showHelp, .cancel)
        #expect(h.app.overlay == nil)
        #expect(!h.app.shouldQuit)
    }

    @Test func quitFromTheList() throws {
        let h = try Harness.unlocked()
        h.send(.quit)
        #expect(h.app.shouldQuit)
    }
}

@Suite struct DialogTests {
    /// Issue 20: `d` deletes at once, `z` undoes it.
    @Test func deleteIsImmediateAndSaysHowToUndo() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana"), item("web", "x")])
        h.send(.deleteSelected)
        #expect(h.app.overlay == nil)
        #expect(h.message == "Deleted mail / ana — Ctrl-Y undoes (10 s)")
        #expect(h.list.rows.map(\.service) == ["web"])
    }

    @Test func deleteOfAnItemGoneMeanwhileSaysSo() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana")])
        h.store.externalRemove(ItemKey(service: "mail", account: "ana"))
        h.send(.deleteSelected)
        #expect(h.message == #"No item for mail / ana"#)
    }

    @Test func deleteFailureInItsOwnWords() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana")])
        h.store.failingDeletes = [ItemKey(service: "mail", account: "ana")]
        h.send(.deleteSelected, .confirm)
        #expect(h.message == KeychainError.io(#"cannot delete service "mail", account "ana""#).description)
        #expect(h.list.rows.count == 1)
    }
}

/// Issue 32: filter predicates, combined with words.
@Suite struct ListPredicateTests {
    @Test func predicatesCombineWithWords() throws {
        var seeded = item("github.com", "ana", "pw")
        seeded.oneTimePassword = SecretBytes(utf8: "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP")
        var ruled = item("gitlab.com", "bo", "pw")
        ruled.accessRule.mode = .ask
        let h = try Harness.unlocked(items: [
            seeded, ruled,
            item("api", "ci", jwt(exp: 1), kind: .token),
            item("api", "live", jwt(exp: 4_000_000_000), kind: .token),
        ])
        func shown(_ query: String) -> [String] {
            h.send(.cancel, .insert(query))
            return h.list.rows.map { "\($0.service)/\($0.account)" }
        }
        #expect(shown("is:2fa") == ["github.com/ana"])
        #expect(shown("is:token") == ["api/ci", "api/live"])
        #expect(shown("is:expired") == ["api/ci"])
        #expect(shown("IS:TOKEN live") == ["api/live"])
        #expect(shown("git is:2fa") == ["github.com/ana"])
        #expect(shown("is:soon").isEmpty)
        #expect(shown("is:conflict").isEmpty)
        // An item with a rule of its own (`fob access`, the editor's Access rows).
        #expect(shown("is:shared") == ["gitlab.com/bo"])
        #expect(shown("git is:shared is:2fa").isEmpty)
        #expect(shown("is:nonsense").isEmpty)
    }
}
