import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobCLI

private func json(_ bytes: [UInt8]) throws -> Any {
    try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
}

private func isoDate(_ value: Any?) -> Date? {
    guard let text = value as? String else { return nil }
    return ISO8601DateFormatter().date(from: text)
}

@Suite struct InitCommandTests {
    @Test func initCreatesAVaultWithThePasswordFile() throws {
        let h = try CLIHarness(createVault: false)
        let result = h.run(["init"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText.contains(h.vaultPath))
        #expect(throws: Never.self) { _ = try h.openVault() }
        #expect(throws: KeychainError.authFailed) { _ = try h.openVault(password: "other") }
    }

    @Test func initUsesTheChosenKDFPreset() throws {
        let h = try CLIHarness(createVault: false)
        let seen = Locked<[KDFParameters.Preset]>([])
        let result = h.run(
            ["init", "--kdf", "sensitive"],
            kdf: { preset in
                seen.mutate { $0.append(preset) }
                return KDFParameters(opslimit: 2, memlimit: 16384)
            })
        #expect(result.status == 0)
        #expect(seen.value == [.sensitive])
        #expect(
            try Vault(url: URL(fileURLWithPath: h.vaultPath)).kdfParameters()
                == KDFParameters(opslimit: 2, memlimit: 16384))
        let h2 = try CLIHarness(createVault: false)
        let seen2 = Locked<[KDFParameters.Preset]>([])
        _ = h2.run(
            ["init"],
            kdf: { preset in
                seen2.mutate { $0.append(preset) }
                return .testing
            })
        #expect(seen2.value == [.moderate])
    }

    @Test func initRefusesToOverwrite() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "mail", "ana"], input: "pw").status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: h.vaultPath))
        let other = try h.file("other", "another password\n")
        let result = h.run(["--vault", h.vaultPath, "--password-file", other, "init"], plain: true)
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "fob: a file already exists at \(h.vaultPath); fob init never overwrites it (choose another --vault)\n"
        )
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.vaultPath)) == before)
        #expect(try h.secret("mail", "ana") == Array("pw".utf8))
    }

    @Test func initAsksTwiceOnTheTerminal() throws {
        let h = try CLIHarness(createVault: false)
        let terminal = ScriptedTerminal(answers: "typed pw", "typed pw")
        let result = h.run(["--vault", h.vaultPath, "init"], terminal: terminal, plain: true)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(terminal.prompts == ["New master password: ", "Confirm: "])
        #expect(throws: Never.self) { _ = try h.openVault(password: "typed pw") }
    }

    @Test func initWithTwoDifferentEntriesCreatesNothing() throws {
        let h = try CLIHarness(createVault: false)
        let result = h.run(
            ["--vault", h.vaultPath, "init"], terminal: ScriptedTerminal(answers: "one", "two"), plain: true)
        #expect(result.status == 1)
        #expect(result.stderr.contains("differ"))
        #expect(!FileManager.default.fileExists(atPath: h.vaultPath))
    }

    @Test func initWithoutTerminalOrPasswordFileExits36() throws {
        let h = try CLIHarness(createVault: false)
        let result = h.run(["--vault", h.vaultPath, "init"], plain: true)
        #expect(result.status == 36)
        #expect(result.stderrLines.count == 1)
        #expect(result.stderr.contains("errSecInteractionNotAllowed"))
        #expect(!FileManager.default.fileExists(atPath: h.vaultPath))
    }

    @Test func initRefusesAnEmptyOrTooLongPassword() throws {
        let h = try CLIHarness(createVault: false)
        let empty = try h.file("empty", "\n")
        let r1 = h.run(["--vault", h.vaultPath, "--password-file", empty, "init"], plain: true)
        #expect(r1.status == 2)
        #expect(r1.stderr.contains("empty"))
        let long = try h.file("long", String(repeating: "a", count: Vault.maxPasswordBytes + 1) + "\n")
        let r2 = h.run(["--vault", h.vaultPath, "--password-file", long, "init"], plain: true)
        #expect(r2.status == 2)
        #expect(r2.stderr.contains("\(Vault.maxPasswordBytes)"))
        #expect(!FileManager.default.fileExists(atPath: h.vaultPath))
        let exact = try h.file("exact", String(repeating: "b", count: Vault.maxPasswordBytes))
        #expect(h.run(["--vault", h.vaultPath, "--password-file", exact, "init"], plain: true).status == 0)
    }

    @Test func initCreatesMissingDirectories() throws {
        let h = try CLIHarness(createVault: false)
        let path = h.directory.file("a/b/vault.db").path
        #expect(h.run(["--vault", path, "--password-file", h.passwordFile, "init"], plain: true).status == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }
}

@Suite struct MasterPasswordTests {
    @Test func wrongPasswordExits51AndChangesNothing() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "mail", "ana"], input: "pw").status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: h.vaultPath))
        let wrong = try h.file("wrong", "correct horsf\n")
        for arguments in [
            ["add", "x", "y"], ["save", "mail", "ana"], ["rm", "mail", "ana"], ["update", "mail", "ana"],
            ["get", "mail", "ana"], ["ls"],
        ] {
            let result = h.run(
                ["--vault", h.vaultPath, "--password-file", wrong] + arguments, stdin: Array("new".utf8), plain: true)
            #expect(result.status == 51, "\(arguments)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr == "fob: wrong master password (errSecAuthFailed)\n")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.vaultPath)) == before)
        #expect(try h.secret("mail", "ana") == Array("pw".utf8))
    }

    @Test func missingVaultExits50() throws {
        let h = try CLIHarness(createVault: false)
        let result = h.run(["get", "mail", "ana"])
        #expect(result.status == 50)
        #expect(result.stderr.contains("fob init"))
    }

    /// `fob ls` lists as the terminal UI does: case and accents aside, the
    /// exact bytes breaking ties (`Bank` beside `bank`, `café` beside `cafe`).
    @Test func lsListsInTheTerminalUIsOrder() throws {
        let h = try CLIHarness()
        for (service, account) in [
            ("zeta", "a"), ("Bank", "ana"), ("agent", "x"), ("café", "b"), ("bank", "Ana"), ("cafe", "a"),
        ] {
            #expect(h.run(["add", service, account], input: "pw").status == 0)
        }
        let table = h.run(["--vault", h.vaultPath, "--password-file", h.passwordFile, "ls"], plain: true)
        let services = table.stdoutText.split(separator: "\n").dropFirst().map { String($0.split(separator: " ")[0]) }
        #expect(services == ["agent", "Bank", "bank", "cafe", "café", "zeta"])
        let json = h.run(["--vault", h.vaultPath, "--password-file", h.passwordFile, "ls", "--json"], plain: true)
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [[String: Any]])
        #expect(objects.compactMap { $0["service"] as? String } == services)
    }

    @Test func unreadablePasswordFileIsAClearError() throws {
        let h = try CLIHarness()
        let missing = h.directory.file("no-such-file").path
        let result = h.run(["--vault", h.vaultPath, "--password-file", missing, "ls"], plain: true)
        #expect(result.status == 1)
        #expect(
            result.stderr.hasPrefix(
                "fob: I/O error: cannot read the password file \(missing): No such file or directory"))
        let directory = h.run(["--vault", h.vaultPath, "--password-file", h.directory.url.path, "ls"], plain: true)
        #expect(directory.status == 1)
        #expect(directory.stderr.contains("cannot read the password file"))
    }

    @Test func passwordFileIsItsFirstLineWithoutCRLF() throws {
        let h = try CLIHarness()
        let crlf = try h.file("crlf", "\(CLIHarness.password)\r\nsecond line\n")
        #expect(h.run(["--vault", h.vaultPath, "--password-file", crlf, "ls"], plain: true).status == 0)
        let noNewline = try h.file("bare", CLIHarness.password)
        #expect(h.run(["--vault", h.vaultPath, "--password-file", noNewline, "ls"], plain: true).status == 0)
    }

    @Test func dashReadsThePasswordFromStdinAndTheRestIsTheSecret() throws {
        let h = try CLIHarness()
        let stdin = Array("\(CLIHarness.password)\nthe secret\n".utf8)
        let result = h.run(
            ["--vault", h.vaultPath, "--password-file", "-", "add", "mail", "ana"], stdin: stdin, plain: true)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try h.secret("mail", "ana") == Array("the secret".utf8))
        let got = h.run(
            ["--vault", h.vaultPath, "--password-file", "-", "get", "mail", "ana"],
            stdin: Array("\(CLIHarness.password)\n".utf8), plain: true)
        #expect(got.stdoutText == "the secret\n")
    }

    @Test func withoutPasswordFileTheTerminalIsAsked() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "mail", "ana"], input: "pw").status == 0)
        let terminal = ScriptedTerminal(answers: CLIHarness.password)
        let result = h.run(["--vault", h.vaultPath, "get", "mail", "ana"], terminal: terminal, plain: true)
        #expect(result.status == 0)
        #expect(result.stdoutText == "pw\n")
        #expect(terminal.prompts == ["Master password: "])
    }

    @Test func noTerminalAndNoPasswordFileExits36() throws {
        let h = try CLIHarness()
        for arguments in [["get", "mail", "ana"], ["ls"], ["add", "a", "b"], ["passwd"]] {
            let result = h.run(["--vault", h.vaultPath] + arguments, input: "x", plain: true)
            #expect(result.status == 36)
            #expect(result.stderr.contains("no --password-file"))
        }
    }

    @Test func ctrlCAtThePromptFailsWithoutChanges() throws {
        let h = try CLIHarness()
        let terminal = ScriptedTerminal([.failure(.interrupted)])
        let result = h.run(
            ["--vault", h.vaultPath, "add", "mail", "ana"], stdin: Array("pw".utf8), terminal: terminal, plain: true)
        #expect(result.status == 130)
        #expect(result.stderr == "fob: interrupted; nothing was changed\n")
        #expect(try h.openVault().allItems().isEmpty)
    }

    @Test func typedPasswordOverTheLimitNamesIt() throws {
        let h = try CLIHarness()
        let terminal = ScriptedTerminal([.failure(.tooLong(maxBytes: Vault.maxPasswordBytes))])
        let result = h.run(["--vault", h.vaultPath, "ls"], terminal: terminal, plain: true)
        #expect(result.status == 2)
        #expect(result.stderr.contains("longer than 65536 bytes"))
    }

    @Test func unicodePasswordsUnlockInAnyNormalForm() throws {
        let h = try CLIHarness(createVault: false)
        let nfc = try h.file("nfc", "\u{C9}t\u{E9} \u{E7}a \u{1F511}\n")
        #expect(h.run(["--vault", h.vaultPath, "--password-file", nfc, "init"], plain: true).status == 0)
        let nfd = try h.file("nfd", "E\u{301}te\u{301} c\u{327}a \u{1F511}\n")
        #expect(h.run(["--vault", h.vaultPath, "--password-file", nfd, "ls"], plain: true).status == 0)
    }
}

@Suite struct PasswdCommandTests {
    @Test func passwdWithNewPasswordFile() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "mail", "ana"], input: "pw").status == 0)
        let newFile = try h.file("new", "brand new\n")
        let result = h.run(["passwd", "--new-password-file", newFile])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(h.run(["ls"]).status == 51)
        let got = h.run(["--vault", h.vaultPath, "--password-file", newFile, "get", "mail", "ana"], plain: true)
        #expect(got.stdoutText == "pw\n")
    }

    @Test func passwdWithBothPasswordsOnStdin() throws {
        let h = try CLIHarness()
        let stdin = Array("\(CLIHarness.password)\nsecond one\n".utf8)
        let result = h.run(
            ["--vault", h.vaultPath, "--password-file", "-", "passwd", "--new-password-file", "-"], stdin: stdin,
            plain: true)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(throws: Never.self) { _ = try h.openVault(password: "second one") }
    }

    @Test func passwdAsksTheNewPasswordTwiceOnTheTerminal() throws {
        let h = try CLIHarness()
        let terminal = ScriptedTerminal(answers: "typed new", "typed new")
        let result = h.run(["passwd"], terminal: terminal)
        #expect(result.status == 0)
        #expect(terminal.prompts == ["New master password: ", "Confirm: "])
        #expect(throws: Never.self) { _ = try h.openVault(password: "typed new") }
    }

    @Test func passwdMismatchOrWrongOldPasswordChangesNothing() throws {
        let h = try CLIHarness()
        #expect(h.run(["passwd"], terminal: ScriptedTerminal(answers: "a", "b")).status == 1)
        #expect(throws: Never.self) { _ = try h.openVault() }
        let wrong = try h.file("wrong", "nope\n")
        let newFile = try h.file("new", "brand new\n")
        let result = h.run(
            ["--vault", h.vaultPath, "--password-file", wrong, "passwd", "--new-password-file", newFile], plain: true)
        #expect(result.status == 51)
        #expect(throws: Never.self) { _ = try h.openVault() }
    }

    @Test func passwdWithoutTerminalForTheNewPasswordExits36() throws {
        let h = try CLIHarness()
        #expect(h.run(["passwd"]).status == 36)
        #expect(throws: Never.self) { _ = try h.openVault() }
    }
}

@Suite struct ItemCommandTests {
    @Test(
        arguments: [
            ("", [], false),
            ("pw", Array("pw".utf8), false),
            ("pw\n", Array("pw".utf8), false),
            ("pw\r\n", Array("pw".utf8), false),
            ("pw\n\n", Array("pw\n".utf8), false),
            ("  pw  ", Array("  pw  ".utf8), false),
            ("l1\nl2\n", Array("l1\nl2".utf8), false),
            ("\n", [], false),
            ("pw\n", Array("pw\n".utf8), true),
            ("pw\r\n", Array("pw\r\n".utf8), true),
            ("l1\nl2\n", Array("l1\nl2\n".utf8), true),
            ("", [], true),
        ] as [(String, [UInt8], Bool)])
    func stdinRules(input: String, stored: [UInt8], raw: Bool) throws {
        for command in ["add", "save"] {
            let h = try CLIHarness()
            let result = h.run([command, "svc", "acct"] + (raw ? ["--raw"] : []), input: input)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try h.secret("svc", "acct") == stored)
            #expect(h.run(["get", "svc", "acct", "--raw"]).stdout == stored)
            #expect(h.run(["get", "svc", "acct"]).stdout == stored + [0x0A])
        }
    }

    @Test func longAndBinarySecretsComeBackExactly() throws {
        let h = try CLIHarness()
        let long = String(repeating: "abcdefghij", count: 400)
        #expect(h.run(["add", "long", "a"], input: long).status == 0)
        #expect(h.run(["get", "long", "a"]).stdoutText == long + "\n")
        let binary: [UInt8] = (0...255).map { UInt8($0) } + [0, 0xFF, 0x0A]
        #expect(h.run(["add", "bin", "a", "--raw"], stdin: binary).status == 0)
        #expect(h.run(["get", "bin", "a", "--raw"]).stdout == binary)
    }

    @Test func secretOverOneMebibyteIsRefused() throws {
        let h = try CLIHarness()
        let result = h.run(
            ["add", "big", "a", "--raw"], stdin: [UInt8](repeating: 0x41, count: Item.maxSecretBytes + 1))
        #expect(result.status == 2)
        #expect(result.stderr.contains("\(Item.maxSecretBytes) bytes"))
        let exact = h.run(["add", "big", "a", "--raw"], stdin: [UInt8](repeating: 0x41, count: Item.maxSecretBytes))
        #expect(exact.status == 0)
    }

    @Test func addSetsAttributesAndRefusesDuplicates() throws {
        let h = try CLIHarness()
        let first = h.run(
            ["add", "api", "ci", "--label", "CI token", "--kind", "token", "--comment", "rotates monthly"], input: "t1")
        #expect(first.status == 0)
        #expect(first.stdout.isEmpty)
        let item = try h.openVault().item(service: "api", account: "ci")
        #expect(item.label == "CI token")
        #expect(item.kind == .token)
        #expect(item.comment == "rotates monthly")
        let duplicate = h.run(["add", "api", "ci"], input: "t2")
        #expect(duplicate.status == 45)
        #expect(duplicate.stderr == "fob: duplicate item: service \"api\", account \"ci\" (errSecDuplicateItem)\n")
        #expect(try h.secret("api", "ci") == Array("t1".utf8))
        let plain = h.run(["add", "mail", "ana"], input: "pw")
        #expect(plain.status == 0)
        #expect(try h.openVault().item(service: "mail", account: "ana").kind == .password)
    }

    @Test func saveAddsThenUpdatesKeepingAttributesNotGiven() throws {
        let h = try CLIHarness()
        #expect(
            h.run(["save", "api", "ci", "--kind", "token", "--label", "L", "--comment", "C"], input: "t1").status == 0)
        #expect(h.run(["save", "api", "ci"], input: "t2").status == 0)
        var item = try h.openVault().item(service: "api", account: "ci")
        #expect(item.secret!.unsafeArray == Array("t2".utf8))
        #expect(item.kind == .token)
        #expect(item.label == "L")
        #expect(item.comment == "C")
        #expect(
            h.run(["save", "api", "ci", "--label", "L2", "--kind", "note", "--comment", ""], input: "t3").status == 0)
        item = try h.openVault().item(service: "api", account: "ci")
        #expect(item.label == "L2")
        #expect(item.kind == .note)
        #expect(item.comment == nil)
        #expect(try h.openVault().allItems().count == 1)
        #expect(h.run(["save", "new", "one"], input: "x").status == 0)
        #expect(try h.openVault().item(service: "new", account: "one").kind == .password)
    }

    @Test func getPrintsTheSecretAndMissingIs44() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "mail", "ana"], input: "pw\n").status == 0)
        let got = h.run(["get", "mail", "ana"])
        #expect(got.status == 0)
        #expect(got.stdoutText == "pw\n")
        #expect(got.stderr.isEmpty)
        let missing = h.run(["get", "mail", "bob"])
        #expect(missing.status == 44)
        #expect(missing.stdout.isEmpty)
        #expect(missing.stderr == "fob: item not found: service \"mail\", account \"bob\" (errSecItemNotFound)\n")
        #expect(h.run(["get", "", "ana"]).status == 44)
    }

    @Test func getJSONHasTheContractShape() throws {
        let h = try CLIHarness()
        let before = Date().addingTimeInterval(-2)
        #expect(h.run(["add", "mail", "ana", "--label", "Mail"], input: "p\"w\\\u{1}é🔑\n").status == 0)
        let result = h.run(["get", "mail", "ana", "--json"])
        #expect(result.status == 0)
        #expect(result.stdout.last == 0x0A)
        let object = try #require(try json(result.stdout) as? [String: Any])
        #expect(
            Set(object.keys) == [
                "service", "account", "kind", "label", "comment", "url", "hasTotp", "accessible",
                "created", "modified", "revision", "secret",
            ])
        #expect(object["revision"] as? Int == 1)
        #expect(object["service"] as? String == "mail")
        #expect(object["account"] as? String == "ana")
        #expect(object["kind"] as? String == "password")
        #expect(object["label"] as? String == "Mail")
        #expect(object["comment"] is NSNull)
        #expect(object["secret"] as? String == "p\"w\\\u{1}é🔑")
        let created = try #require(isoDate(object["created"]))
        let modified = try #require(isoDate(object["modified"]))
        #expect(created >= before && created <= Date().addingTimeInterval(2))
        #expect(modified >= created)
    }

    @Test func getJSONUsesBase64ForBytesThatAreNotUTF8() throws {
        let h = try CLIHarness()
        let bytes: [UInt8] = [0xFF, 0xFE, 0x00, 0x41, 0xC3]
        #expect(h.run(["add", "bin", "x", "--raw"], stdin: bytes).status == 0)
        let object = try #require(try json(h.run(["get", "bin", "x", "--json"]).stdout) as? [String: Any])
        #expect(object["secret"] == nil)
        let encoded = try #require(object["secretBase64"] as? String)
        #expect(Data(base64Encoded: encoded) == Data(bytes))
        #expect(object["label"] is NSNull)
    }

    @Test func updateReplacesTheSecretAndMissingIs44() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "api", "ci", "--kind", "token", "--label", "L"], input: "old").status == 0)
        #expect(h.run(["update", "api", "ci"], input: "new\n").status == 0)
        var item = try h.openVault().item(service: "api", account: "ci")
        #expect(item.secret!.unsafeArray == Array("new".utf8))
        #expect(item.kind == .token)
        #expect(item.label == "L")
        #expect(h.run(["update", "api", "ci", "--label", "L2", "--raw"], input: "newer\n").status == 0)
        item = try h.openVault().item(service: "api", account: "ci")
        #expect(item.secret!.unsafeArray == Array("newer\n".utf8))
        #expect(item.label == "L2")
        let missing = h.run(["update", "api", "nobody"], input: "x")
        #expect(missing.status == 44)
        #expect(try h.openVault().allItems().count == 1)
    }

    @Test func emptyStandardInputNeverReplacesAStoredSecret() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "api", "ci", "--label", "L"], input: "kept").status == 0)
        // `fob update … --label X </dev/null` used to store "" over the secret.
        for args in [["update", "api", "ci", "--label", "X"], ["save", "api", "ci", "--label", "X"]] {
            // No byte at all (</dev/null) and a lone newline (echo "$UNSET") alike.
            for input in ["", "\n", "\r\n"] {
                let refused = h.run(args, input: input)
                #expect(refused.status == 2, "\(args)")
                #expect(refused.stderr.contains("is empty; nothing was changed"), "\(refused.stderr)")
                let item = try h.openVault().item(service: "api", account: "ci")
                #expect(item.secret!.unsafeArray == Array("kept".utf8), "\(args)")
                #expect(item.label == "L" && item.revision == 1, "\(args)")
            }
        }
        #expect(h.run(["update", "api", "ci", "--label", "X", "--keep-secret"], input: "").status == 0)
        var item = try h.openVault().item(service: "api", account: "ci")
        #expect(item.secret!.unsafeArray == Array("kept".utf8))
        #expect(item.label == "X")
        // --allow-empty empties it on purpose; a new item may be empty.
        #expect(h.run(["update", "api", "ci", "--allow-empty"], input: "\n").status == 0)
        item = try h.openVault().item(service: "api", account: "ci")
        #expect(item.secret!.unsafeArray.isEmpty)
        #expect(h.run(["save", "new", "one"], input: "").status == 0)
        #expect(h.run(["add", "new", "two"], input: "").status == 0)
    }

    @Test func rmDeletesAndMissingIs44() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "mail", "ana"], input: "pw").status == 0)
        #expect(h.run(["add", "mail", "bob"], input: "pw").status == 0)
        #expect(h.run(["rm", "mail", "ana"]).status == 0)
        #expect(h.run(["get", "mail", "ana"]).status == 44)
        #expect(h.run(["rm", "mail", "ana"]).status == 44)
        #expect(try h.openVault().allItems().map(\.account) == ["bob"])
    }

    @Test func secretsFromATerminalAreAskedTwice() throws {
        let h = try CLIHarness()
        let terminal = ScriptedTerminal(answers: "typed", "typed")
        let result = h.run(["add", "mail", "ana"], terminal: terminal, stdinIsTerminal: true)
        #expect(result.status == 0)
        #expect(terminal.prompts == ["Secret for service \"mail\", account \"ana\": ", "Retype the secret: "])
        #expect(try h.secret("mail", "ana") == Array("typed".utf8))
        let differ = h.run(
            ["save", "mail", "ana"], terminal: ScriptedTerminal(answers: "one", "two"), stdinIsTerminal: true)
        #expect(differ.status == 1)
        #expect(try h.secret("mail", "ana") == Array("typed".utf8))
        let update = h.run(
            ["update", "mail", "ana"], terminal: ScriptedTerminal(answers: "u", "u"), stdinIsTerminal: true)
        #expect(update.status == 0)
        #expect(try h.secret("mail", "ana") == Array("u".utf8))
    }

    @Test func addOnATerminalRefusesADuplicateBeforeAsking() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "mail", "ana"], input: "pw").status == 0)
        let terminal = ScriptedTerminal(answers: "typed", "typed")
        let result = h.run(["add", "mail", "ana"], terminal: terminal, stdinIsTerminal: true)
        #expect(result.status == 45)
        #expect(terminal.prompts.isEmpty)
    }

    @Test func errorsNeverContainTheSecret() throws {
        let h = try CLIHarness()
        let secret = "s3cr3t-value-\(UUID().uuidString)"
        #expect(h.run(["add", "mail", "ana"], input: secret).status == 0)
        let runs = [
            h.run(["add", "mail", "ana"], input: secret),
            h.run(["update", "mail", "x"], input: secret),
            h.run(
                ["add", "big", "x", "--raw"],
                stdin: Array(secret.utf8) + [UInt8](repeating: 0x41, count: Item.maxSecretBytes)),
        ]
        for run in runs {
            #expect(run.status != 0)
            #expect(!run.stderr.contains(secret))
            #expect(!run.stderr.contains(CLIHarness.password))
        }
    }
}

@Suite struct ListCommandTests {
    @Test func lsOfAnEmptyVaultPrintsNothing() throws {
        let h = try CLIHarness()
        let result = h.run(["ls"])
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        let json = h.run(["ls", "--json"])
        #expect(json.stdoutText == "[]\n")
    }

    @Test func lsShowsATableWithoutSecrets() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "web", "zoe", "--label", "Web"], input: "secret-one").status == 0)
        #expect(h.run(["add", "api", "ci", "--kind", "token"], input: "secret-two").status == 0)
        #expect(h.run(["add", "api", "bot\nx"], input: "secret-three").status == 0)
        let result = h.run(["ls"])
        #expect(result.status == 0)
        let lines = result.stdoutText.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines[0].hasPrefix("SERVICE  ACCOUNT    KIND      LABEL  MODIFIED"))
        #expect(lines[1].hasPrefix("api      bot\\u{A}x  password"))
        #expect(lines[2].hasPrefix("api      ci         token"))
        #expect(lines[3].hasPrefix("web      zoe        password  Web"))
        #expect(!result.stdoutText.contains("secret-"))
    }

    @Test func lsFiltersByServiceAndPrintsJSON() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "web", "zoe", "--label", "Web"], input: "secret-one").status == 0)
        #expect(h.run(["add", "api", "ci", "--kind", "token"], input: "secret-two").status == 0)
        let result = h.run(["ls", "--service", "api", "--json"])
        #expect(result.status == 0)
        #expect(!result.stdoutText.contains("secret-"))
        let array = try #require(try json(result.stdout) as? [[String: Any]])
        #expect(array.count == 1)
        #expect(
            Set(array[0].keys) == [
                "service", "account", "kind", "label", "comment", "url", "hasTotp", "accessible",
                "created", "modified", "revision",
            ])
        #expect(array[0]["revision"] as? Int == 1)
        #expect(array[0]["service"] as? String == "api")
        #expect(array[0]["kind"] as? String == "token")
        #expect(array[0]["label"] is NSNull)
        #expect(isoDate(array[0]["modified"]) != nil)
        let all = try #require(try json(h.run(["ls", "--json"]).stdout) as? [[String: Any]])
        #expect(all.map { $0["service"] as? String } == ["api", "web"])
        #expect(h.run(["ls", "--service", "none"]).stdout.isEmpty)
        #expect(h.run(["ls", "--service", "none", "--json"]).stdoutText == "[]\n")
    }
}

@Suite struct DamagedVaultTests {
    @Test func foreignFileExits93() throws {
        let h = try CLIHarness(createVault: false)
        try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }).write(
            to: URL(fileURLWithPath: h.vaultPath))
        let result = h.run(["ls"])
        #expect(result.status == 93)
        #expect(result.stderrLines.count == 1)
        #expect(result.stderr.contains("errSecDecode"))
    }
}

/// A value shared with a `@Sendable` closure.
final class Locked<Value>: @unchecked Sendable {
    private var stored: Value
    private let lock = NSLock()
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}
