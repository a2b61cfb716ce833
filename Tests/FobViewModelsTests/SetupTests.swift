import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

@Suite struct CreateVaultTests {
    @Test func startsOnCreateScreenWithoutVault() throws {
        let h = Harness(vault: false)
        let create = try #require(h.app.createVaultModel)
        #expect(create.focus == .newPassword)
        #expect(create.kdfPreset == .moderate)
    }

    @Test func emptyPasswordIsRefused() throws {
        let h = Harness(vault: false)
        h.send(.submit)
        #expect(h.app.createVaultModel?.message.text == CreateVaultModel.emptyMessage)
        h.send(.focusNext, .submit)
        #expect(h.app.createVaultModel?.message.text == CreateVaultModel.emptyMessage)
        #expect(!h.store.vaultExists)
    }

    @Test func mismatchIsRefusedAndConfirmationCleared() throws {
        let h = Harness(vault: false)
        h.send(.insert("one"), .submit, .insert("two"), .submit)
        let create = try #require(h.app.createVaultModel)
        #expect(create.message.text == CreateVaultModel.mismatchMessage)
        #expect(create.confirmation.isEmpty)
        #expect(create.focus == .confirm)
        #expect(!create.newPassword.isRevealed && create.newPassword.count == 3)
        #expect(!h.store.vaultExists)
    }

    @Test func matchingPasswordsCreateTheVaultWithThePreset() throws {
        let h = Harness(vault: false)
        h.send(.setKDFPreset(.interactive), .insert("pässword"), .focusNext, .insert("pässword"), .submit)
        #expect(h.app.mainModel != nil)
        #expect(h.store.password == SecretBytes(utf8: "pässword"))
        #expect(h.store.createdKDF == KDFParameters(.interactive))
    }

    @Test func storeErrorIsShownInItsOwnWords() throws {
        let h = Harness(vault: false)
        h.store.failure = .io("disk full")
        h.send(.insert("pw"), .submit, .insert("pw"), .submit)
        #expect(h.app.createVaultModel?.message.text == KeychainError.io("disk full").description)
    }

    @Test func editingActionsReachTheFocusedField() throws {
        let h = Harness(vault: false)
        h.send(.insert("abc"), .deleteBackward, .moveCursor(.home), .deleteForward, .toggleReveal)
        let create = try #require(h.app.createVaultModel)
        #expect(create.newPassword.isRevealed && create.newPassword.text == "b")
        h.send(.clearField)
        #expect(create.newPassword.isEmpty)
        h.send(.focusPrevious, .insert("x"))
        #expect(create.confirmation.count == 1)
        h.send(.quit)
        #expect(h.app.shouldQuit)
    }
}

@Suite struct UnlockTests {
    @Test func wrongPasswordCountsAttemptsAndRevealsNothing() throws {
        let h = Harness(items: [item("mail", "ana")])
        h.unlock("wrong")
        let unlock = try #require(h.app.unlockModel)
        #expect(unlock.failedAttempts == 1)
        #expect(unlock.message.text == "Wrong master password (1 failed attempt)")
        #expect(unlock.password.isEmpty)
        h.unlock("again wrong")
        #expect(unlock.failedAttempts == 2)
        #expect(unlock.message.text == "Wrong master password (2 failed attempts)")
        #expect(h.store.isLocked)
        #expect(h.store.calls["allItems"] == nil)
    }

    @Test func rightPasswordShowsTheList() throws {
        let h = Harness(items: [item("mail", "ana")])
        h.unlock()
        let main = try #require(h.app.mainModel)
        #expect(main.list.rows.map(\.service) == ["mail"])
        #expect(main.focus == .list)
    }

    @Test func emptyPasswordAsksForOne() throws {
        let h = Harness()
        h.send(.submit)
        #expect(h.app.unlockModel?.message.text == "Enter the master password")
        #expect(h.store.calls["unlock"] == nil)
    }

    @Test func otherErrorsInTheirOwnWords() throws {
        let h = Harness()
        h.store.failure = .decode("bad header")
        h.unlock()
        #expect(h.app.unlockModel?.message.text == KeychainError.decode("bad header").description)
        #expect(h.app.unlockModel?.failedAttempts == 0)
    }

    @Test func maskedEntryAndQuit() throws {
        let h = Harness()
        h.send(.insert("secret"))
        #expect(h.app.unlockModel?.password.isRevealed == false && h.app.unlockModel?.password.count == 6)
        h.send(.quit)
        #expect(h.app.shouldQuit)
    }
}
