import FobStore
import Testing

@testable import FobTerminal
@testable import FobViewModels

/// The request bar and the Request dialog at 80×24 and 40×12: who, what,
/// through what, and every answer stay on screen.
@Suite struct ConsentRenderTests {
    private func app() -> AppModel {
        let app = makeApp(items: [("github.com", "ana", "s3cret")])
        app.mainModel!.consent.questions = [sampleQuestion]
        return app
    }

    @Test func theBarShowsAboveTheStatusLineAndKeepsTheListsKeys() throws {
        try #require(unicodeLocale)
        let app = app()
        let text = draw(app, rows: 24, columns: 80).text
        #expect(text.contains("? git[4242] asks for github.com / ana (fob get) · F3 answer"))
        #expect(KeyMap.action(for: .character("o"), in: app) == .insert("o"))
    }

    /// Issue 32: at 80 columns a long question cut `· F3 answer` off the bar
    /// and the legend left F3 out. The question is shortened instead, at 80
    /// and 40 columns, and the legend names F3 in the list and the editor.
    @Test func theAnswerKeyStaysOnTheBarAndInTheLegendWhenNarrow() throws {
        try #require(unicodeLocale)
        let app = makeApp(items: [("github.com", "ana", "s3cret")])
        let long = ConsentQuestion(
            id: 3, pid: 11568, program: "/usr/bin/bash", parents: "", workingDirectory: "/home/ana", terminal: "",
            item: #"service "dropbox", account "ana@example.com""#, channel: "fob get", leaseSeconds: 900)
        app.mainModel!.consent.questions = [long, sampleQuestion]
        for (rows, columns) in [(24, 80), (12, 40)] {
            let canvas = draw(app, rows: rows, columns: columns)
            let bar = canvas.line(rows - 3)
            #expect(bar.hasPrefix(" ? bash[11568] as"), "\(columns): \(bar)")
            #expect(bar.contains("… · F3 answer · +1 more"), "\(columns): \(bar)")
            #expect(canvas.line(rows - 1).contains("F3 answer request"), "\(columns)")
        }
        app.send(.newItem)
        #expect(draw(app, rows: 24, columns: 80).line(23).contains("F3 answer request"))
        #expect(KeyMap.action(for: .function(3), in: app) == .openRequest)
    }

    @Test func theDialogNamesTheRequesterAndEveryAnswerAt80x24() throws {
        try #require(unicodeLocale)
        let app = app()
        app.send(.openRequest)
        let text = draw(app, rows: 24, columns: 80).text
        for part in [
            "git[4242] asks for the secret of", "github.com / ana through fob get", "program /usr/bin/git",
            "run by bash[12] ← tmux[3]", "in /home/ana/src", "on no terminal", "t  this program until the vault locks",
            "o  once", "m  this program for 15 minutes", "a  always, for this item", "d  deny        Esc later",
        ] {
            #expect(text.contains(part), "\(part)")
        }
    }

    /// A lease of 90 s was offered as "1 minutes" (its minutes cut): the
    /// dialog, its compact answers and the legend name its real length.
    @Test func aLeaseOfPartMinutesIsNamedExactly() throws {
        try #require(unicodeLocale)
        let app = makeApp(items: [("github.com", "ana", "s3cret")])
        app.mainModel!.consent.questions = [
            ConsentQuestion(
                id: 4, pid: 4242, program: "/usr/bin/git", parents: "", workingDirectory: "/home/ana",
                terminal: "", item: "github.com / ana", channel: "fob get", leaseSeconds: 90)
        ]
        app.send(.openRequest)
        var canvas = draw(app, rows: 24, columns: 80)
        #expect(canvas.text.contains("m  this program for 1 minute 30 seconds"), "\(canvas.text)")
        #expect(!canvas.text.contains("1 minutes"))
        #expect(canvas.line(23).contains("m 1 min 30 s"), "\(canvas.line(23))")
        canvas = draw(app, rows: 12, columns: 40)
        #expect(canvas.text.contains("m 1 min 30 s"), "\(canvas.text)")
    }

    @Test func atFortyByTwelveTheAnswersShrinkAndWhoAndWhatStay() throws {
        try #require(unicodeLocale)
        let app = app()
        app.send(.openRequest)
        let text = draw(app, rows: 12, columns: 40).text
        #expect(text.contains("git[4242] asks for the secret of"))
        #expect(text.contains("github.com / ana through fob get"))
        #expect(text.contains("t until lock · o once"))
        #expect(text.contains("d deny · Esc later"))
    }

    @Test func anSSHKeysQuestionShowsItsDestinationAt80x24() throws {
        try #require(unicodeLocale)
        let app = makeApp(items: [("github.com", "ana", "s3cret")])
        app.mainModel!.consent.questions = [
            ConsentQuestion(
                id: 2, pid: 31940, program: "/usr/bin/ssh", parents: "sh[30179]", workingDirectory: "/home/ana",
                terminal: "/dev/pts/0",
                item:
                    "SSH key k (SHA256:RHw9d3wzxRkcTjmv+S4oIjeN9aDQpII5t1mWJUexdG8) to log in to [127.0.0.1]:28750 (verified)",
                channel: "SSH agent", leaseSeconds: 900)
        ]
        app.send(.openRequest)
        let text = draw(app, rows: 24, columns: 80).text
        #expect(text.contains("[127.0.0.1]:28750 (verified)"))
        for part in ["ssh[31940] asks for the secret of", "program /usr/bin/ssh", "on /dev/pts/0", "d  deny"] {
            #expect(text.contains(part), "\(part)")
        }
    }
}
