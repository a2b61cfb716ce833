import FobAccess
import FobClipboard
import FobSessions
import FobStore
import FobTestSupport
import FobTokens
import Foundation
import Testing

@testable import FobViewModels

/// The whole item in the form: edit and rename, keeping the secret, the
/// empty-secret question, one-time codes over the test clock, the
/// generator, and the `u` / `o` copy keys.
@Suite struct ItemEditTests {
    static let seed = "otpauth://totp/Example:ana?secret=JBSWY3DPEHPK3PXP&issuer=Example"

    static func seeded(_ service: String, _ account: String, _ secret: String = "pw") -> Item {
        var stored = item(service, account, secret)
        stored.oneTimePassword = SecretBytes(utf8: seed)
        return stored
    }

    /// Issue 13 #2: Enter on an item, Tab to Save, Enter keeps the secret.
    @Test func enterTabSaveKeepsTheStoredSecret() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "hunter2")])
        h.send(.openSelected)
        #expect(h.main.focus == .service)
        h.send(.focus(.saveButton), .submit)
        #expect(h.app.overlay == nil)
        #expect(h.store.storedItems[ItemKey(service: "mail", account: "ana")]?.secret == SecretBytes(utf8: "hunter2"))
        #expect(h.message == #"No edits to save in mail / ana"#)
    }

    @Test func emptyingANonEmptySecretAsksFirst() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "hunter2")])
        h.send(.openSelected, .focus(.password), .insert("x"), .deleteBackward, .focus(.saveButton), .submit)
        guard case .confirm(let dialog) = h.app.overlay else {
            Issue.record("no confirmation")
            return
        }
        #expect(dialog.purpose == .saveEmptySecret)
        h.send(.dismiss)
        #expect(h.store.storedItems[ItemKey(service: "mail", account: "ana")]?.secret == SecretBytes(utf8: "hunter2"))
        h.send(.focus(.saveButton), .submit, .confirm)
        #expect(h.store.storedItems[ItemKey(service: "mail", account: "ana")]?.secret == SecretBytes(utf8: ""))
    }

    @Test func editingEveryAttributeSavesThem() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.send(.editSelected)
        #expect(h.main.focus == .service)
        #expect(h.form.service.text == "mail")
        h.send(.focus(.kind), .cycleKind(1))
        #expect(h.form.kind == .token)
        h.send(
            .focus(.label), .insert("Work mail"), .focus(.url), .insert("https://mail.example"),
            .focus(.notes), .insert("line 1"), .submit, .insert("line 2"),
            .focus(.oneTimeSeed), .insert(Self.seed), .save)
        let stored = try #require(h.store.storedItems[ItemKey(service: "mail", account: "ana")])
        #expect(stored.kind == .token)
        #expect(stored.label == "Work mail")
        #expect(stored.url == "https://mail.example")
        #expect(stored.notes == "line 1\nline 2")
        #expect(stored.oneTimePassword == SecretBytes(utf8: Self.seed))
        #expect(stored.secret == SecretBytes(utf8: "pw"))
        // Reopened: the form shows what is stored.
        #expect(h.form.label.text == "Work mail")
        #expect(h.form.openedHasSeed)
    }

    @Test func customFieldsAreAddedChangedAndRemoved() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        let key = ItemKey(service: "mail", account: "ana")
        h.send(.editSelected, .focus(.fieldName), .insert("pin"), .focus(.fieldValue), .insert("4321"), .save)
        #expect(h.store.storedItems[key]?.customFields == [CustomField(name: "pin", text: "4321", isHidden: true)])
        // Shown masked until Ctrl-R.
        #expect(h.form.detailRows(at: h.app.now).contains(DetailRow(label: "pin", text: "••••••••", masked: true)))
        h.send(
            .focus(.fieldName), .insert("question"), .focus(.fieldValue), .insert("blue"),
            .focus(.fieldHidden), .cycleKind(1), .save)
        #expect(h.store.storedItems[key]?.customFields.map(\.name) == ["pin", "question"])
        #expect(h.store.storedItems[key]?.customFields.last?.isHidden == false)
        #expect(h.form.detailRows(at: h.app.now).contains(DetailRow(label: "question", text: "blue", masked: false)))
        // An empty value removes the field; the secret is kept throughout.
        h.send(.focus(.fieldName), .insert("pin"), .save)
        #expect(h.store.storedItems[key]?.customFields.map(\.name) == ["question"])
        #expect(h.store.storedItems[key]?.secret == SecretBytes(utf8: "pw"))
    }

    @Test func aBadSeedIsRefusedAndNothingSaved() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.send(.openSelected, .focus(.oneTimeSeed), .insert("not a seed!"), .save)
        #expect(h.message.hasPrefix("One-time seed: not"))
        #expect(h.main.focus == .oneTimeSeed)
        #expect(h.store.calls["update"] == nil)
    }

    @Test func renameKeepsCreationDateAndSecret() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        let created = try #require(h.store.storedItems[ItemKey(service: "mail", account: "ana")]?.created)
        h.clock.advance(by: 100)
        h.send(.editSelected, .clearField, .insert("post"), .save)
        #expect(h.store.storedItems[ItemKey(service: "mail", account: "ana")] == nil)
        let renamed = try #require(h.store.storedItems[ItemKey(service: "post", account: "ana")])
        #expect(renamed.created == created)
        #expect(renamed.secret == SecretBytes(utf8: "pw"))
        #expect(h.message == "Saved (renamed mail / ana to post / ana) — Ctrl-Y undoes (10 s)")
        #expect(h.list.selectedRow?.service == "post")
    }

    @Test func renameOntoAnExistingItemChangesNothing() throws {
        let h = try Harness.unlocked(items: [item("bank", "ana", "b"), item("mail", "ana", "m")])
        h.send(.moveSelection(1), .editSelected)
        #expect(h.form.service.text == "mail")
        h.send(.clearField, .insert("bank"), .save)
        #expect(h.message == #"An item for bank / ana exists already; nothing changed"#)
        #expect(h.store.storedItems[ItemKey(service: "bank", account: "ana")]?.secret == SecretBytes(utf8: "b"))
        #expect(h.store.storedItems[ItemKey(service: "mail", account: "ana")]?.secret == SecretBytes(utf8: "m"))
        // One write, refused by the store (no lookup before it): nothing changed.
        #expect(h.store.calls["update"] == 1)
    }

    @Test func oneTimeCodeCountsDownAndRollsOver() throws {
        let h = try Harness.unlocked(items: [Self.seeded("mail", "ana")])
        let otp = try OneTimePassword(parsing: Self.seed)
        h.send(.openSelected)
        let start = h.clock.now
        let first = try #require(h.form.oneTimeCode(at: h.app.now))
        #expect(first.code == otp.code(at: start))
        #expect(first.secondsLeft == otp.secondsLeft(at: start))
        // Hidden until revealed, with the seconds left beside it.
        let masked = try #require(h.form.oneTimeCodeText(at: h.app.now))
        #expect(masked.hasPrefix("••••••  "))
        #expect(!masked.contains(first.code))
        h.send(.toggleReveal)
        #expect(h.form.oneTimeCodeText(at: h.app.now)?.hasPrefix(first.code) == true)
        // To the last second of the step, then past it: the shown code is replaced.
        let left = try #require(first.secondsLeft)
        h.clock.advance(by: TimeInterval(left - 1))
        h.app.tick()
        #expect(h.form.oneTimeCode(at: h.app.now)?.code == first.code)
        #expect(h.form.oneTimeCode(at: h.app.now)?.secondsLeft == 1)
        h.clock.advance(by: 1)
        h.app.tick()
        let next = try #require(h.form.oneTimeCode(at: h.app.now))
        #expect(next.code == otp.code(at: h.clock.now))
        #expect(
            next.code
                == otp.code(
                    counter: OneTimePassword.timeStep(atUnixTime: Int64(start.timeIntervalSince1970), period: 30) + 1))
        #expect(next.secondsLeft == 30)
        let rows = h.form.detailRows(at: h.app.now)
        #expect(rows.first?.label == "One-time code")
        #expect(rows.first?.text.hasPrefix(next.code) == true)
    }

    @Test func copyKeysUAndO() throws {
        let h = try Harness.unlocked(items: [Self.seeded("mail", "ana", "pw"), item("web", "bo", "x")])
        h.send(.copyUserID)
        #expect(h.clipboard.contents == "ana")
        #expect(h.message.hasPrefix("Copied user ID of mail / ana"))
        h.send(.copyOneTimeCode)
        let otp = try OneTimePassword(parsing: Self.seed)
        #expect(h.clipboard.contents == otp.code(at: h.clock.now))
        // Cleared like `c`.
        h.clock.advance(by: 45)
        h.app.tick()
        #expect(h.clipboard.contents == nil)
        h.send(.moveSelection(1), .copyOneTimeCode)
        #expect(h.message == "web / bo has no one-time seed: nothing copied")
    }

    @Test func ctrlGFillsThePasswordWithTheGeneratorSettings() throws {
        let h = try Harness.unlocked()
        h.send(.newItem, .focus(.password), .generatePassword)
        #expect(h.form.password.count == 20)
        #expect(h.form.passwordEdited)
        #expect(h.message == "Generated a password (20 characters, 130.9 bits); Ctrl-R shows it")
        h.send(.focus(.service), .generatePassword)
        #expect(h.message.hasPrefix("Ctrl-G fills the Password field"))
    }

    @Test(
        arguments: [("", nil), ("20 luds", 20), ("8 l", 8), ("6 words", nil), ("12 exclude=O0", 12)] as [(String, Int?)]
    )
    func generatorSpecsParse(text: String, length: Int?) throws {
        let policy = try GeneratorSpec.parse(text)
        if let length { #expect(policy.length == length && policy.kind == .characters) }
    }

    @Test func generatorSpecRejectsBadInput() {
        #expect(throws: GeneratorSpecError.unknownWord("abc")) { try GeneratorSpec.parse("abc") }
        #expect(throws: GeneratorSpecError.twoNumbers) { try GeneratorSpec.parse("1 2") }
        #expect(throws: GeneratorSpecError.outOfRange(0)) { try GeneratorSpec.parse("0") }
        #expect(throws: GeneratorSpecError.outOfRange(65)) { try GeneratorSpec.parse("65 words") }
        #expect(throws: GeneratorSpecError.classesWithWords) { try GeneratorSpec.parse("6 words lu") }
        #expect(throws: GeneratorSpecError.unknownWord("999999")) { try GeneratorSpec.parse("999999") }
    }

    @Test func aTokenSavedFromTheFormHasItsKind() throws {
        let h = try Harness.unlocked()
        h.send(
            .newItem, .insert("api"), .focus(.userID), .insert("ci"), .focus(.password), .insert("tok"),
            .focus(.kind), .cycleKind(1), .save)
        #expect(h.store.storedItems[ItemKey(service: "api", account: "ci")]?.kind == .token)
        h.send(.focus(.list), .logoutWipe(service: nil))
        #expect(h.main.logoutReview?.rows.map(\.key.service) == ["api"])
    }

    @Test func lineBreaksShowAndDropsAreSaid() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "l1\nl2\r\nl3")])
        h.send(.openSelected)
        #expect(!h.form.retrievedPasswordText.contains("\u{FFFD}"))
        // A fixed-width mask whatever the length.
        #expect(h.form.retrievedPasswordText == String(repeating: "•", count: 8))
        h.send(.toggleReveal)
        #expect(h.form.retrievedPasswordText == "l1⏎l2⏎l3")
        h.send(.focus(.password), .insert("a\nb"))
        #expect(h.form.password.text == "ab")
        #expect(h.message == "Dropped 1 line break: this field holds one line")
        h.send(.focus(.notes), .clearField, .insert("x\r\ny"))
        #expect(h.form.notes.text == "x\ny")
    }

    @Test func tokenClaimsShowAndCountDown() throws {
        let claims = #"{"sub":"user-1","iss":"https://id.example","aud":"api","scope":"read write","exp":1767229200}"#
        let token = "eyJhbGciOiJub25lIn0." + Base64URL.encode(Array(claims.utf8)) + ".sig"
        let h = try Harness.unlocked(items: [item("api", "ci", token, kind: .token)])
        h.send(.openSelected)
        let rows = h.form.detailRows(at: h.app.now)
        let byLabel = Dictionary(uniqueKeysWithValues: rows.map { ($0.label, $0.text) })
        #expect(byLabel["Subject"] == "user-1")
        #expect(byLabel["Issuer"] == "https://id.example")
        #expect(byLabel["Audience"] == "api")
        #expect(byLabel["Scope"] == "read write")
        let before = try #require(byLabel["Expires"])
        h.clock.advance(by: 1800)
        let after = h.form.detailRows(at: h.app.now).first { $0.label == "Expires" }?.text
        #expect(after != before)
        // Locking drops the decoded values.
        h.send(.lock)
        #expect(h.app.mainModel == nil)
    }
}

/// `r` on an OAuth item refreshes it at its provider, in the background.
@Suite struct OAuthRefreshKeyTests {
    /// An unlocked app over an `oauth` item `api`/`me` (first in the list) and a password item `web`/`bo`.
    private func unlockedApp(_ provider: FakeProvider, lockAfter: TimeInterval = 300) -> (AppModel, InMemoryStore) {
        let clock = TestClock()
        let store = InMemoryStore(password: Harness.password, now: { clock.now })
        let set = OAuthTokenSet(
            accessToken: "at-0", refreshToken: provider.issueRefreshToken(),
            expiresAt: clock.now.addingTimeInterval(600), tokenEndpoint: provider.tokenURL, clientID: "client-1")
        store.externalPut(Item(service: "api", account: "me", kind: .oauth, secret: SecretBytes(set.encoded())))
        store.externalPut(item("web", "bo", "pw"))
        let controller = ClipboardController(
            clipboard: FakeClipboard(), clearAfter: 45, clock: clock, runner: InlineRunner())
        let app = AppModel(
            store: store, clipboard: controller, clock: clock, lockAfter: lockAfter, oauthTransport: provider)
        app.send(.insert(Harness.password))
        app.send(.submit)
        return (app, store)
    }

    /// Ticks (as the terminal does every 200 ms, here every 2 ms) until `done`, for at most 10 s.
    private func tick(_ app: AppModel, until done: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            app.tick()
            if done() { return true }
            Thread.sleep(forTimeInterval: 0.002)
        }
        return false
    }

    private func accessToken(_ store: InMemoryStore) throws -> String {
        let secret = try #require(store.storedItems[ItemKey(service: "api", account: "me")]?.secret)
        return try OAuthTokenSet.decode(secret.unsafeArray).accessToken
    }

    @Test func rRefreshesTheSelectedOAuthItem() throws {
        let provider = FakeProvider()
        let (app, store) = unlockedApp(provider)
        app.send(.refreshSelected)
        #expect(tick(app) { app.mainModel?.form.message.text.hasPrefix("Refreshed") == true })
        #expect(provider.refreshCount == 1)
        #expect(app.mainModel?.form.message.text == #"Refreshed api / me"#)
        #expect(try accessToken(store) != "at-0")
        app.send(.moveSelection(1))
        app.send(.refreshSelected)
        #expect(provider.refreshCount == 1)
        #expect(
            app.mainModel?.form.message.text == #"F5 refreshes OAuth items; web / bo is a password"#)
    }

    /// A provider that does not answer leaves the UI working: keys and
    /// ticks go on, "Refreshing…" shows, and the answer lands when it comes.
    @Test func aSlowProviderNeverBlocksTheUI() throws {
        let provider = FakeProvider()
        provider.hold()
        defer { provider.release() }
        let (app, store) = unlockedApp(provider)
        let main = try #require(app.mainModel)
        app.send(.refreshSelected) // returns at once
        #expect(main.form.message.text == #"Refreshing api / me…"#)
        #expect(tick(app) { provider.heldRequests == 1 })
        // The UI goes on: ticks return, keys work, a second r says it is busy.
        let started = Date()
        for _ in 0..<20 { app.tick() }
        #expect(Date().timeIntervalSince(started) < 1)
        app.send(.refreshSelected)
        #expect(main.form.message.text == #"Still refreshing api / me…"#)
        app.send(.moveSelection(1))
        #expect(main.list.selectedRow?.service == "web")
        app.send(.newItem)
        app.send(.insert("typed"))
        #expect(main.form.service.text == "typed")
        #expect(try accessToken(store) == "at-0")
        #expect(provider.refreshCount == 0)
        provider.release()
        #expect(tick(app) { main.form.message.text.hasPrefix("Refreshed") })
        #expect(main.form.message.text == #"Refreshed api / me"#)
        #expect(provider.refreshCount == 1)
        #expect(try accessToken(store) != "at-0")
        #expect(main.form.service.text == "typed")
    }

    @Test func aFailedRefreshSaysWhyAndChangesNothing() throws {
        let provider = FakeProvider()
        provider.failure = .status(400, body: #"{"error":"invalid_grant"}"#)
        let (app, store) = unlockedApp(provider)
        app.send(.refreshSelected)
        #expect(tick(app) { app.mainModel?.form.message.text.hasPrefix("Refresh failed") == true })
        #expect(app.mainModel?.form.message.tone == .error)
        #expect(try accessToken(store) == "at-0")
    }

    /// An app whose `r` refresh waits at a held provider, then `l`.
    private func lockedDuringAHeldRefresh() -> (FakeProvider, AppModel, InMemoryStore) {
        let provider = FakeProvider()
        provider.hold()
        let (app, store) = unlockedApp(provider)
        app.send(.refreshSelected)
        #expect(tick(app) { provider.heldRequests == 1 })
        app.send(.lock)
        return (provider, app, store)
    }

    /// Locking while the provider has not answered: the screen locks at
    /// once, the store stays open for the refresh alone until its answer is
    /// saved (a rotated refresh token must not be lost), then locks.
    @Test func lockingDuringARefreshLocksTheScreenAndKeepsItsAnswer() throws {
        let (provider, app, store) = lockedDuringAHeldRefresh()
        defer { provider.release() }
        #expect(app.mainModel == nil && app.unlockModel != nil, "the screen locks at once")
        #expect(app.storeLockDeferred)
        #expect(!store.isLocked)
        provider.release()
        #expect(tick(app) { !app.storeLockDeferred })
        #expect(store.isLocked, "the store locks as soon as the refresh has saved its answer")
        #expect(app.mainModel == nil && app.unlockModel != nil)
        app.send(.insert(Harness.password))
        app.send(.submit)
        #expect(provider.refreshCount == 1)
        #expect(try accessToken(store) != "at-0", "the refreshed tokens were saved")
    }

    /// Unlocking again before the refresh ends: the store is not locked
    /// under the user's feet when it does.
    @Test func unlockingAgainBeforeTheRefreshEndsKeepsTheStoreOpen() throws {
        let (provider, app, store) = lockedDuringAHeldRefresh()
        defer { provider.release() }
        app.send(.insert(Harness.password))
        app.send(.submit)
        #expect(app.mainModel != nil)
        provider.release()
        #expect(tick(app) { !app.storeLockDeferred })
        #expect(!store.isLocked)
        #expect(app.mainModel != nil)
        #expect(try accessToken(store) != "at-0")
    }

    /// Quitting while a refresh waits gives it a little time to save its answer.
    @Test func quittingWaitsBrieflyForARefresh() throws {
        let provider = FakeProvider()
        provider.hold()
        let (app, store) = unlockedApp(provider)
        app.send(.refreshSelected)
        #expect(tick(app) { provider.heldRequests == 1 })
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { provider.release() }
        app.shutdown(timeout: 5)
        #expect(store.isLocked)
        #expect(provider.refreshCount == 1)
        try store.unlock(password: .text(Harness.password))
        #expect(try accessToken(store) != "at-0")
    }
}

/// A line break pasted into the master-password field is dropped and said so.
@Suite struct SetupLineBreakTests {
    @Test func unlockSaysALineBreakWasDropped() {
        let h = Harness()
        h.app.send(.insert("pass\nword"))
        #expect(h.app.unlockModel?.password.text == "password")
        #expect(h.app.unlockModel?.message.text == "Dropped 1 line break: this field holds one line")
    }
}

/// Edit and rename over a real vault file.
@Suite struct VaultRenameTests {
    @Test func renameKeepsCreationDateAndRefusesAnExistingName() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("vault.db")
        let created = Date(timeIntervalSince1970: 1_700_000_000)
        let vault = try Vault.create(at: url, password: .text("master"), kdf: .testing, now: { created })
        try vault.add(item("bank", "ana", "b"))
        try vault.add(item("mail", "ana", "m"))
        vault.lock()
        let clock = TestClock()
        let store = VaultStore(url: url, now: { clock.now })
        let app = AppModel(
            store: store,
            clipboard: ClipboardController(clipboard: FakeClipboard(), clock: clock, runner: InlineRunner()),
            clock: clock, lockAfter: 300, kdfOverride: .testing)
        app.send(.insert("master"))
        app.send(.submit)
        let main = try #require(app.mainModel)
        app.send(.moveSelection(1))
        app.send(.editSelected)
        app.send(.clearField)
        app.send(.insert("bank"))
        app.send(.save)
        #expect(main.form.message.text == #"An item for bank / ana exists already; nothing changed"#)
        let check = try Vault(url: url)
        try check.unlock(password: .text("master"))
        #expect(try check.item(service: "mail", account: "ana").secret == SecretBytes(utf8: "m"))
        #expect(try check.item(service: "bank", account: "ana").secret == SecretBytes(utf8: "b"))
        let before = try check.item(service: "mail", account: "ana").created
        app.send(.clearField)
        app.send(.insert("post"))
        app.send(.save)
        #expect(main.form.message.text == "Saved (renamed mail / ana to post / ana) — Ctrl-Y undoes (10 s)")
        let renamed = try check.item(service: "post", account: "ana")
        #expect(renamed.created == before)
        #expect(renamed.secret == SecretBytes(utf8: "m"))
        #expect(throws: KeychainError.itemNotFound(#"service "mail", account "ana""#)) {
            _ = try check.item(service: "mail", account: "ana")
        }
    }
}

/// The seeds' Save on an existing item that was not opened changes only what was filled in.
@Suite struct UnopenedSaveTests {
    @Test func savingByNameKeepsTheOtherAttributes() throws {
        var stored = ItemEditTests.seeded("mail", "ana", "old")
        stored.label = "Mail"
        stored.url = "https://mail.example"
        stored.notes = "keep me"
        stored.kind = .token
        stored.customFields = [CustomField(name: "pin", text: "1", isHidden: true)]
        let h = try Harness.unlocked(items: [stored])
        h.send(
            .newItem, .insert("mail"), .focus(.userID), .insert("ana"), .focus(.password), .insert("new"),
            .focus(.fieldName), .insert("q"), .focus(.fieldValue), .insert("a"), .save)
        let after = try #require(h.store.storedItems[ItemKey(service: "mail", account: "ana")])
        #expect(after.secret == SecretBytes(utf8: "new"))
        #expect(after.label == "Mail" && after.url == "https://mail.example" && after.notes == "keep me")
        #expect(after.kind == .token)
        #expect(after.oneTimePassword == SecretBytes(utf8: ItemEditTests.seed))
        #expect(after.customFields.map(\.name) == ["pin", "q"])
    }
}

/// Random text never crashes the Generator field's parser.
@Suite struct GeneratorSpecRobustnessTests {
    @Test func randomTextGivesAPolicyOrATypedError() {
        let alphabet = Array("0123456789 ludswordexclude=\t\u{0}é".unicodeScalars)
        for _ in 0..<2_000 {
            let text = String(
                String.UnicodeScalarView((0..<Int.random(in: 0...24)).map { _ in alphabet.randomElement()! }))
            if let policy = try? GeneratorSpec.parse(text) {
                #expect(
                    PasswordPolicy.lengthRange.contains(policy.length)
                        && PasswordPolicy.wordRange.contains(policy.words))
            }
        }
    }
}
